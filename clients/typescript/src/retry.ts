// When and how long to wait before retrying (CONTRACT §3, §14, §17, §20).
import type { RevopsError } from "./errors.js";

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** The longest timer Node runs (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Exponential backoff with jitter: attempt 0 waits 250–500 ms, then 500–1000 ms, … up to
 * 4–8 s. The random half spreads out clients that failed together.
 */
export function backoffDelay(attempt: number): number {
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * The wait before retrying an error answer, or undefined when it must not be retried.
 * Retried: 429 (after Retry-After), 409 idempotency_key_in_use (the first request is still
 * running: its answer will be replayed) and 5xx (a 5xx never leaves half-written data,
 * and the idempotency key makes the retry safe). Everything else is the caller's fault and
 * fails the same way again.
 */
export function retryDelay(error: RevopsError, attempt: number, maxRetryAfter: number): number | undefined {
  const retryable =
    error.status === 429 ||
    error.status >= 500 ||
    (error.status === 409 && error.code === "idempotency_key_in_use");
  if (!retryable) return undefined;
  if (error.retryAfter === undefined) return backoffDelay(attempt);
  // Waiting less than asked would only earn another 429; waiting very long silently
  // would hang the caller: past maxRetryAfter the error is thrown instead.
  if (error.retryAfter > maxRetryAfter) return undefined;
  const asked = error.retryAfter * 1000;
  return asked + Math.random() * Math.min(1000, asked * 0.1 + 100);
}

/** Waits ms, or rejects with the signal's reason when it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.min(ms, MAX_TIMER_MS));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

// Webhook verification (CONTRACT §8): Revops signs as Standard Webhooks, so the
// reference `standardwebhooks` library checks the signature and the timestamp (5 minutes
// either way); this file adds the typed payload and a typed error.
import { Webhook, WebhookVerificationError as StandardError } from "standardwebhooks";
import type { webhooks } from "./generated/schema.js";

/** The event types Revops delivers (the document's `webhooks` section). */
export type WebhookEventType = keyof webhooks;

type JsonBody<Op> = Op extends { requestBody: { content: { "application/json": infer B } } } ? B : never;

/**
 * A delivered webhook body, one member per event type. TypeScript narrows unions only on
 * top-level properties, not on `event.type`, so narrow with {@link isEventType}:
 * `if (isEventType(e, "deal-signed")) e.deal.net_price`.
 */
export type WebhookEvent<T extends WebhookEventType = WebhookEventType> = {
  [K in T]: JsonBody<webhooks[K]["post"]>;
}[T];

/** Narrows a verified body to one event type. */
export function isEventType<T extends WebhookEventType>(event: WebhookEvent, type: T): event is WebhookEvent<T> {
  return event.event.type === type;
}

/** Request headers as Node, fetch or a framework gives them. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | readonly string[] | undefined>;

/** Why a webhook was refused. */
export type WebhookFailure =
  | "missing_headers"
  | "bad_signature"
  | "timestamp_too_old"
  | "timestamp_too_new"
  | "invalid_payload";

/** The webhook is not authentic or not fresh: answer 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  constructor(
    readonly reason: WebhookFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Verifies webhooks of one endpoint. Give it the endpoint's secret (`whsec_…`); while you
 * rotate, give both the new and the old one: a signature under either is accepted.
 */
export class Webhooks {
  readonly #verifiers: Webhook[];

  constructor(secret: string | readonly string[]) {
    const secrets = typeof secret === "string" ? [secret] : [...secret];
    if (secrets.length === 0 || secrets.some((s) => !s)) throw new TypeError("Webhooks: a signing secret (whsec_…) is required");
    this.#verifiers = secrets.map((s) => new Webhook(s));
  }

  /**
   * Checks the signature and timestamp of a delivery and returns its parsed body.
   * `payload` is the raw request body exactly as received (for a GET endpoint, the
   * `payload` query parameter's decoded value): parsing and re-serializing JSON first
   * changes the bytes and breaks the signature.
   */
  verify(payload: string | Uint8Array, headers: WebhookHeaders): WebhookEvent {
    const body = typeof payload === "string" ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    const picked = pickHeaders(headers);
    let failure: WebhookVerificationError | undefined;
    for (const verifier of this.#verifiers) {
      try {
        verifier.verify(body, picked, { jsonParse: false });
        return parseEvent(body.toString());
      } catch (err) {
        if (!(err instanceof StandardError)) throw err;
        failure ??= translate(err);
        // A timestamp fault is the same under every secret: no point trying the others.
        if (failure.reason !== "bad_signature") break;
      }
    }
    throw failure ?? new WebhookVerificationError("bad_signature", "No matching signature found");
  }
}

/** Verifies one delivery with the endpoint's secret(s); see {@link Webhooks.verify}. */
export function verifyWebhook(payload: string | Uint8Array, headers: WebhookHeaders, secret: string | readonly string[]): WebhookEvent {
  return new Webhooks(secret).verify(payload, headers);
}

const NAMES = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const;

function pickHeaders(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof headers.get === "function") {
    const h = headers as { get(name: string): string | null };
    for (const name of NAMES) {
      const v = h.get(name);
      if (v !== null) out[name] = v;
    }
    return out;
  }
  const lower = new Map<string, string | readonly string[] | undefined>();
  for (const [k, v] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) lower.set(k.toLowerCase(), v);
  for (const name of NAMES) {
    const v = lower.get(name);
    if (v !== undefined) out[name] = typeof v === "string" ? v : v.join(" ");
  }
  return out;
}

function translate(err: Error): WebhookVerificationError {
  const m = err.message;
  const reason: WebhookFailure = m.includes("Missing required headers")
    ? "missing_headers"
    : m.includes("too old")
      ? "timestamp_too_old"
      : m.includes("too new")
        ? "timestamp_too_new"
        : "bad_signature";
  return new WebhookVerificationError(reason, `Webhook refused: ${m}`);
}

function parseEvent(text: string): WebhookEvent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError("invalid_payload", "Webhook body is signed but is not JSON");
  }
  const event = (value as { event?: { type?: unknown } } | null)?.event;
  if (typeof event !== "object" || event === null || typeof event.type !== "string") {
    throw new WebhookVerificationError("invalid_payload", "Webhook body has no event.type");
  }
  return value as WebhookEvent;
}

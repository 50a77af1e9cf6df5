import { STATUS_CODES } from "node:http";
import type { components } from "./generated/schema.js";

type ErrorBody = components["schemas"]["Error"]["error"];
/** One validation fault of a 400 answer (CONTRACT §4). */
export type Fault = components["schemas"]["Fault"];
/** The error types of CONTRACT §4. */
export type ErrorType = ErrorBody["type"];

/**
 * An error answer of the API (any non-2xx status), after the client's retries. It carries
 * the fields of the §4 envelope; it never carries the API key or request headers, so it is
 * safe to log.
 */
export class RevopsError extends Error {
  override readonly name = "RevopsError";
  /** The HTTP status. */
  readonly status: number;
  /** `authentication_error`, `permission_error`, `invalid_request_error`, `rate_limit_error` or `api_error`. */
  readonly type: ErrorType;
  /** Machine-readable code, e.g. `parameter_invalid`, `resource_missing`, `invalid_state_transition`. */
  readonly code: string;
  /** The one field at fault, when there is one (e.g. `event_metrics[2].metric_value`). */
  readonly param: string | undefined;
  /** The request id (the body's, else the `X-Request-Id` header): quote it to support. */
  readonly requestId: string | undefined;
  /** Every validation fault found (400 answers); empty otherwise. */
  readonly errors: readonly Fault[];
  /** Seconds the server asked to wait (`Retry-After`), when it did. */
  readonly retryAfter: number | undefined;

  constructor(init: {
    status: number;
    type: ErrorType;
    code: string;
    message: string;
    param?: string | undefined;
    requestId?: string | undefined;
    errors?: readonly Fault[] | undefined;
    retryAfter?: number | undefined;
  }) {
    super(init.message);
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param;
    this.requestId = init.requestId;
    this.errors = init.errors ?? [];
    this.retryAfter = init.retryAfter;
  }

  /** Reads an error response: the §4 envelope, or (from a proxy, say) anything else. */
  static async fromResponse(res: Response): Promise<RevopsError> {
    const text = await res.text().catch(() => "");
    const headerId = res.headers.get("x-request-id") ?? undefined;
    const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
    let body: ErrorBody | undefined;
    try {
      const parsed = JSON.parse(text) as { error?: ErrorBody };
      if (parsed && typeof parsed.error === "object" && typeof parsed.error.code === "string") body = parsed.error;
    } catch {
      // Not JSON: a proxy or load balancer answered; handled below.
    }
    if (body) {
      return new RevopsError({
        status: res.status,
        type: body.type,
        code: body.code,
        message: body.message,
        param: body.param,
        requestId: body.request_id || headerId,
        errors: body.errors,
        retryAfter,
      });
    }
    // Not the envelope (a proxy's or load balancer's page): the status and its standard text
    // only, never the body or the answer's reason phrase, which could hold anything, e.g. a
    // proxy's echo of the request headers (the API key among them).
    const statusText = STATUS_CODES[res.status];
    return new RevopsError({
      status: res.status,
      type: res.status === 429 ? "rate_limit_error" : res.status >= 500 ? "api_error" : "invalid_request_error",
      code: "unexpected_response",
      message: `HTTP ${res.status}${statusText ? ` ${statusText}` : ""} without a Revops error body`,
      requestId: headerId,
      retryAfter,
    });
  }
}

/** The request never got an HTTP answer (DNS, connection refused, reset, timeout), after retries. */
export class RevopsConnectionError extends Error {
  override readonly name = "RevopsConnectionError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Seconds from a `Retry-After` header: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

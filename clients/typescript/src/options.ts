/** Options of the client, all optional. */
export interface RevopsOptions {
  /** A secret key (`sk_live_…`, `sk_sandbox_…`); default `process.env.REVOPS_API_KEY`. */
  apiKey?: string;
  /** The API's base URL; default `process.env.REVOPS_BASE_URL`, else `http://127.0.0.1:8080` (`revops dev`). */
  baseUrl?: string;
  /**
   * Retries after the first attempt (network errors, 429, 409 `idempotency_key_in_use`, 5xx);
   * default 3. A whole number, 0 or more: anything else throws a TypeError or RangeError.
   */
  maxRetries?: number;
  /**
   * Milliseconds one attempt may take before it is abandoned (and retried); default 60000.
   * A finite number above 0 (at most 2^31 - 1): anything else throws.
   */
  timeout?: number;
  /**
   * The longest `Retry-After` (seconds) the client waits for; a 429 asking for longer is
   * thrown at once rather than silently blocking the caller. Default 60; a finite number
   * above 0, anything else throws.
   */
  maxRetryAfter?: number;
  /** A `fetch` to use instead of the global one (proxies, tests, instrumentation). */
  fetch?: typeof fetch;
  /** Headers added to every request. */
  headers?: Record<string, string>;
  /**
   * The client refuses to run in a browser, where a secret key would be exposed to
   * every visitor. Set this only for trusted, non-public tooling.
   */
  dangerouslyAllowBrowser?: boolean;
}

/** Options of one call. */
export interface RequestOptions {
  /**
   * The `Idempotency-Key` of a POST, PATCH, PUT or DELETE. By default each call makes
   * one (a random UUID) and every retry of that call reuses it (CONTRACT §14). Give your
   * own to make a call idempotent across processes, e.g. a job id.
   */
  idempotencyKey?: string;
  /** Aborts the call, waiting retries included. */
  signal?: AbortSignal;
  /** Overrides the client's `maxRetries` for this call (checked the same way: the call rejects). */
  maxRetries?: number;
  /** Overrides the client's per-attempt `timeout` (ms) for this call (checked the same way). */
  timeout?: number;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

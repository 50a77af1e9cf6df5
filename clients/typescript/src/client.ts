import { randomUUID } from "node:crypto";
import { RevopsConnectionError, RevopsError } from "./errors.js";
import { RevopsOperations } from "./generated/operations.js";
import type { RequestOptions, RevopsOptions } from "./options.js";
import { backoffDelay, MAX_TIMER_MS, retryDelay, sleep } from "./retry.js";
import type { ApiRequest } from "./types.js";
import { VERSION } from "./version.js";

const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

/**
 * The Revops API client, for servers (Node 20.3+). One method per operation (see
 * RevopsOperations), plus `…All` iterators over paged lists.
 *
 * ```ts
 * const revops = new Revops(); // REVOPS_API_KEY, REVOPS_BASE_URL
 * const deal = await revops.getDeal(id);
 * ```
 */
export class Revops extends RevopsOperations {
  // A private field: the key never shows in console.log(client), JSON or errors.
  readonly #apiKey: string;
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeout: number;
  readonly maxRetryAfter: number;
  readonly #fetch: typeof fetch;
  readonly #headers: Record<string, string>;

  constructor(options: RevopsOptions = {}) {
    super();
    const g = globalThis as Record<string, unknown>;
    if (g.window !== undefined && g.document !== undefined && !options.dangerouslyAllowBrowser) {
      throw new Error(
        "@revops/client runs on servers only: a secret key in a browser is readable by every visitor. " +
          "Call Revops from your backend.",
      );
    }
    const env = typeof process === "undefined" ? {} : process.env;
    const apiKey = options.apiKey ?? env.REVOPS_API_KEY;
    if (!apiKey) {
      throw new Error("No Revops API key: pass { apiKey } to new Revops() or set REVOPS_API_KEY.");
    }
    this.#apiKey = apiKey;
    this.baseUrl = (options.baseUrl ?? env.REVOPS_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.maxRetries = checkMaxRetries(options.maxRetries ?? 3, "maxRetries");
    this.timeout = checkPositive(options.timeout ?? 60_000, "timeout", MAX_TIMER_MS);
    this.maxRetryAfter = checkPositive(options.maxRetryAfter ?? 60, "maxRetryAfter");
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#headers = { ...options.headers };
  }

  /**
   * Sends one call: the first attempt and its retries. A POST, PATCH, PUT or DELETE carries
   * one Idempotency-Key that every retry reuses, so a retry after a lost answer never does
   * the change twice (CONTRACT §14).
   */
  protected async request<T>(req: ApiRequest): Promise<T> {
    const options: RequestOptions = req.options ?? {};
    // Checked before anything is sent: with a NaN maxRetries `attempt >= maxRetries` is never
    // true, and the call would retry forever.
    const maxRetries =
      options.maxRetries === undefined ? this.maxRetries : checkMaxRetries(options.maxRetries, "options.maxRetries");
    const timeout = options.timeout === undefined ? this.timeout : checkPositive(options.timeout, "options.timeout", MAX_TIMER_MS);
    const url = this.#url(req);
    const headers: Record<string, string> = {
      Accept: "application/json",
      "User-Agent": `revops-typescript/${VERSION} node/${typeof process === "undefined" ? "?" : process.version}`,
      ...this.#headers,
      ...options.headers,
      Authorization: `Bearer ${this.#apiKey}`,
    };
    if (req.method !== "GET") headers["Idempotency-Key"] = options.idempotencyKey ?? randomUUID();
    let body: string | undefined;
    if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers["Content-Type"] = "application/json";
    }
    const what = `${req.method} ${req.path}`;

    for (let attempt = 0; ; attempt++) {
      options.signal?.throwIfAborted();
      const timer = AbortSignal.timeout(Math.ceil(timeout)); // it takes whole ms only
      const signal = options.signal ? AbortSignal.any([options.signal, timer]) : timer;
      let res: Response;
      let text: string | undefined; // a 2xx answer's body, read whole
      try {
        res = await this.#fetch(url, { method: req.method, headers, body, signal });
        if (res.ok) text = await res.text();
      } catch (err) {
        // The caller's abort ends the call; anything else (refused, reset, our timeout)
        // is a network error: retried, as the request may never have arrived.
        options.signal?.throwIfAborted();
        if (attempt >= maxRetries) {
          const reason = timer.aborted ? `no answer within ${timeout} ms` : errorMessage(err);
          throw new RevopsConnectionError(`${what}: ${reason} (after ${attempt + 1} attempts)`, { cause: err });
        }
        await sleep(backoffDelay(attempt), options.signal);
        continue;
      }
      // Parsed outside the try: a 2xx whose body is not JSON is an error of the answer,
      // not a network error to retry.
      if (text !== undefined) return (text === "" ? undefined : JSON.parse(text)) as T;
      const error = await RevopsError.fromResponse(res);
      const delay = retryDelay(error, attempt, this.maxRetryAfter);
      if (delay === undefined || attempt >= maxRetries) throw error;
      await sleep(delay, options.signal);
    }
  }

  #url(req: ApiRequest): string {
    const path = req.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = req.pathParams?.[name];
      if (value === undefined || value === "") throw new TypeError(`${req.path}: missing path parameter ${name}`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(req.query ?? {})) appendQuery(search, key, value);
    const qs = search.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ""}`;
  }

  /** Walks a §9 list: the next page starts after the last id seen. */
  protected async *paginateByCursor<T extends { id: string }>(
    fetchPage: (startingAfter: string | undefined) => Promise<{ data: T[]; has_more: boolean }>,
    first: string | undefined,
  ): AsyncIterableIterator<T> {
    let cursor = first;
    for (;;) {
      const page = await fetchPage(cursor);
      yield* page.data;
      const last = page.data.at(-1);
      if (!page.has_more || last === undefined) return;
      cursor = last.id;
    }
  }

  /**
   * Walks meter values (§18): `next_page` is sent back as `page` until it is null or empty.
   * A `next_page` equal to the page just read ends the walk too, as in the Go client: asking
   * for it again would return the same page, forever.
   */
  protected async *paginateByPage<T>(
    fetchPage: (page: string | undefined) => Promise<{ data: T[]; next_page: string | null }>,
    first: string | undefined,
  ): AsyncIterableIterator<T> {
    let page: string | undefined = first;
    for (;;) {
      const answer = await fetchPage(page);
      yield* answer.data;
      const next = answer.next_page;
      if (next === null || next === undefined || next === "" || next === page) return;
      page = next;
    }
  }
}

/** maxRetries: a whole number, 0 or more (a number, so NaN, Infinity and "3" are refused). */
function checkMaxRetries(value: unknown, name: string): number {
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new TypeError(`@revops/client: ${name} must be a number, got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`@revops/client: ${name} must be a whole number, 0 or more, got ${value}`);
  }
  return value;
}

/**
 * timeout (ms), maxRetryAfter (s): a finite number above 0, and at most `max` (a timer
 * longer than MAX_TIMER_MS fires at once in Node, so a huge timeout would fail every attempt).
 */
function checkPositive(value: unknown, name: string, max = Number.MAX_VALUE): number {
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new TypeError(`@revops/client: ${name} must be a number, got ${describe(value)}`);
  }
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    const range = max === Number.MAX_VALUE ? "a finite number above 0" : `a number above 0, at most ${max}`;
    throw new RangeError(`@revops/client: ${name} must be ${range}, got ${value}`);
  }
  return value;
}

function describe(value: unknown): string {
  return typeof value === "number" ? String(value) : typeof value === "string" ? JSON.stringify(value) : typeof value;
}

/** Query values: scalars as text, arrays repeated, objects as deepObject (`filter[k]=v`). */
function appendQuery(search: URLSearchParams, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const v of value) appendQuery(search, key, v);
  } else if (typeof value === "object") {
    for (const [k, v] of Object.entries(value)) appendQuery(search, `${key}[${k}]`, v);
  } else {
    search.append(key, String(value));
  }
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return err.message + cause;
  }
  return String(err);
}

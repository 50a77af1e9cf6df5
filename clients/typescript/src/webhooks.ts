// Webhook verification (CONTRACT §8, §25): Revops signs as Standard Webhooks, so the
// reference `standardwebhooks` library checks an hmac-sha256 endpoint's `v1` signature and
// the timestamp (5 minutes either way). That library checks `v1` only: an ed25519
// endpoint's `v1a` signatures are checked here with Node's own crypto, given its public
// key (`whpk_…`). This file adds the typed payload and a typed error.
import { createPublicKey, verify as verifySignature, type KeyObject } from "node:crypto";
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
 * Verifies webhooks of one endpoint. Give it the endpoint's signing key as the API shows
 * it: its secret (`whsec_…`) for an hmac-sha256 endpoint, its `public_key` (`whpk_…`) for
 * an ed25519 one. While you rotate (or switch schemes), give both the new and the old
 * one: a signature under either is accepted.
 */
export class Webhooks {
  readonly #verifiers: Verifier[];

  constructor(key: string | readonly string[]) {
    const keys = typeof key === "string" ? [key] : [...key];
    if (keys.length === 0 || keys.some((k) => !k)) throw new TypeError("Webhooks: a signing secret (whsec_…) or public key (whpk_…) is required");
    this.#verifiers = keys.map((k) => (k.startsWith(PUBLIC_KEY_PREFIX) ? ed25519Verifier(k) : standardVerifier(k)));
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
        verifier(body, picked);
        return parseEvent(body.toString());
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        failure ??= err;
        // A timestamp fault is the same under every key: no point trying the others.
        if (failure.reason !== "bad_signature") break;
      }
    }
    throw failure ?? new WebhookVerificationError("bad_signature", "No matching signature found");
  }
}

/** Verifies one delivery with the endpoint's key(s); see {@link Webhooks.verify}. */
export function verifyWebhook(payload: string | Uint8Array, headers: WebhookHeaders, key: string | readonly string[]): WebhookEvent {
  return new Webhooks(key).verify(payload, headers);
}

/** Throws a WebhookVerificationError unless the delivery is signed under its key and fresh. */
type Verifier = (body: string | Buffer, headers: Record<string, string>) => void;

const PUBLIC_KEY_PREFIX = "whpk_";
const TOLERANCE_SECONDS = 5 * 60; // as the standardwebhooks library allows

/** An hmac-sha256 secret's verifier: the reference library, its errors made typed. */
function standardVerifier(secret: string): Verifier {
  const wh = new Webhook(secret);
  return (body, headers) => {
    try {
      wh.verify(body, headers, { jsonParse: false });
    } catch (err) {
      throw err instanceof StandardError ? translate(err) : err;
    }
  };
}

/**
 * An ed25519 public key's verifier: a `v1a,<base64>` entry of webhook-signature must be
 * the signature of "id.timestamp.body"; the timestamp is checked as the reference library
 * checks it. The key is imported from its 32 raw bytes as a JWK (no other dependency).
 */
function ed25519Verifier(publicKey: string): Verifier {
  const raw = Buffer.from(publicKey.slice(PUBLIC_KEY_PREFIX.length), "base64");
  if (raw.length !== 32) throw new TypeError("Webhooks: the public key is not whpk_ followed by the base64 of a 32-byte ed25519 key");
  const key: KeyObject = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
  return (body, headers) => {
    const id = headers["webhook-id"], ts = headers["webhook-timestamp"], sigs = headers["webhook-signature"];
    if (!id || !ts || !sigs) throw new WebhookVerificationError("missing_headers", "Webhook refused: Missing required headers");
    const sent = Number(ts);
    if (!/^\d+$/.test(ts) || !Number.isSafeInteger(sent)) throw new WebhookVerificationError("bad_signature", "Webhook refused: Invalid Signature Headers");
    const now = Math.floor(Date.now() / 1000);
    if (now - sent > TOLERANCE_SECONDS) throw new WebhookVerificationError("timestamp_too_old", "Webhook refused: Message timestamp too old");
    if (sent > now + TOLERANCE_SECONDS) throw new WebhookVerificationError("timestamp_too_new", "Webhook refused: Message timestamp too new");
    const signed = Buffer.concat([Buffer.from(`${id}.${ts}.`), typeof body === "string" ? Buffer.from(body) : body]);
    for (const entry of sigs.split(" ")) {
      const [version, signature] = entry.split(",", 2);
      if (version !== "v1a" || !signature) continue;
      if (verifySignature(null, signed, key, Buffer.from(signature, "base64"))) return;
    }
    throw new WebhookVerificationError("bad_signature", "Webhook refused: No matching signature found");
  };
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

// Webhook verification of ed25519 endpoints (CONTRACT §25): Revops signs "id.timestamp.body"
// with the endpoint's private key and sends "v1a,<base64>"; the receiver holds only the public
// key the API shows ("whpk_<base64 of the 32 raw bytes>").
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac, generateKeyPairSync, randomBytes, sign as edSign } from "node:crypto";
import { Webhooks, verifyWebhook, WebhookVerificationError } from "../dist/index.js";

// The vector of internal/platform/signing, produced by Revops's own signing: the private key
// is the seed 0x00..0x1f, the message the Standard Webhooks test message.
const VECTOR = {
  publicKey: "whpk_A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  ts: 1614265330,
  body: '{"event":{"id":"msg_p5jXN8AQM9LWM0D4loKWxJek","time":"1614265330","type":"account-created"}}',
};
// Signed by Revops for this body (an event, so that verify returns it); the same pair is
// pinned in internal/platform/signing's tests.
const VECTOR_V1A = "v1a,0THOYMKQaeKwAPuKsmQl2yF858PmAUqa4GV04D0kwFME79vKVaFchys9aJK3z6nxI8S+IbS4StGw8jaxz5CVCA==";

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const raw = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url");
  return { privateKey, publicKey: "whpk_" + raw.toString("base64") };
}

function signV1a(privateKey, id, ts, body) {
  return "v1a," + edSign(null, Buffer.from(`${id}.${ts}.${body}`), privateKey).toString("base64");
}

function signV1(secret, id, ts, body) {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return "v1," + createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64");
}

function delivery(sign, ts = Math.floor(Date.now() / 1000)) {
  const id = "3f6e1a52-8c0e-4a47-9b1e-4f1f8d6f2a10";
  const body = JSON.stringify({ event: { id, time: String(ts), type: "account-created" }, account: { id: "a1", object: "account", name: "Acme", status: "draft" } });
  return { body, headers: { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": sign.map((f) => f(id, ts, body)).join(" ") } };
}

/** Runs fn with Date.now reading the vector's time. */
function atVectorTime(fn) {
  const real = Date.now;
  Date.now = () => VECTOR.ts * 1000;
  try {
    return fn();
  } finally {
    Date.now = real;
  }
}

test("the Go-signed vector verifies with its public key", () => {
  const headers = { "webhook-id": VECTOR.id, "webhook-timestamp": String(VECTOR.ts), "webhook-signature": VECTOR_V1A };
  const event = atVectorTime(() => verifyWebhook(VECTOR.body, headers, VECTOR.publicKey));
  assert.equal(event.event.type, "account-created");
  assert.throws(
    () => atVectorTime(() => verifyWebhook(VECTOR.body.replace("account", "deal"), headers, VECTOR.publicKey)),
    (e) => e instanceof WebhookVerificationError && e.reason === "bad_signature",
  );
});

test("a v1a delivery verifies with the public key; a v1 entry, another key or a changed body does not", () => {
  const { privateKey, publicKey } = keyPair();
  const other = keyPair();
  const secret = "whsec_" + randomBytes(32).toString("base64");
  const { body, headers } = delivery([(id, ts, b) => signV1a(privateKey, id, ts, b)]);
  assert.equal(new Webhooks(publicKey).verify(body, headers).account.name, "Acme");
  assert.equal(new Webhooks(publicKey).verify(Buffer.from(body), new Headers(headers)).event.type, "account-created");
  const refuse = (b, h, key, reason) =>
    assert.throws(() => verifyWebhook(b, h, key), (e) => e instanceof WebhookVerificationError && e.reason === reason);
  refuse(body, headers, other.publicKey, "bad_signature");
  refuse(body.replace("Acme", "Acne"), headers, publicKey, "bad_signature");
  const hmacOnly = delivery([(id, ts, b) => signV1(secret, id, ts, b)]);
  refuse(hmacOnly.body, hmacOnly.headers, publicKey, "bad_signature");
  const { "webhook-signature": _, ...unsigned } = headers;
  refuse(body, unsigned, publicKey, "missing_headers");
  const old = delivery([(id, ts, b) => signV1a(privateKey, id, ts, b)], Math.floor(Date.now() / 1000) - 6 * 60);
  refuse(old.body, old.headers, publicKey, "timestamp_too_old");
  const future = delivery([(id, ts, b) => signV1a(privateKey, id, ts, b)], Math.floor(Date.now() / 1000) + 6 * 60);
  refuse(future.body, future.headers, publicKey, "timestamp_too_new");
});

test("during a rotation or a change of scheme either key verifies", () => {
  const current = keyPair();
  const previous = keyPair();
  const secret = "whsec_" + randomBytes(32).toString("base64");
  const { body, headers } = delivery([
    (id, ts, b) => signV1a(current.privateKey, id, ts, b),
    (id, ts, b) => signV1a(previous.privateKey, id, ts, b),
    (id, ts, b) => signV1(secret, id, ts, b),
  ]);
  for (const key of [current.publicKey, previous.publicKey, secret, [keyPair().publicKey, previous.publicKey]]) {
    assert.equal(verifyWebhook(body, headers, key).event.type, "account-created");
  }
  assert.throws(() => verifyWebhook(body, headers, keyPair().publicKey), WebhookVerificationError);
});

test("a public key that is not 32 bytes of base64 is refused", () => {
  for (const k of ["whpk_", "whpk_AAAA"]) assert.throws(() => new Webhooks(k), TypeError);
});

// Webhook verification: deliveries signed as Revops signs them (internal/platform/signing: HMAC-SHA256
// of "id.timestamp.body" under the base64 key after "whsec_", sent as "v1,<base64>").
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { Webhooks, verifyWebhook, WebhookVerificationError } from "../dist/index.js";

const newSecret = () => "whsec_" + randomBytes(32).toString("base64");
const SECRET = newSecret();
const OLD = newSecret();

function sign(secret, id, ts, body) {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return "v1," + createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64");
}

function delivery({ secrets = [SECRET], ts = Math.floor(Date.now() / 1000), type = "account-created" } = {}) {
  const id = "3f6e1a52-8c0e-4a47-9b1e-4f1f8d6f2a10";
  const body = JSON.stringify({
    event: { id, time: String(ts), type },
    account: { id: "a1", object: "account", name: "Acme", status: "draft" },
  });
  const headers = {
    "webhook-id": id,
    "webhook-timestamp": String(ts),
    "webhook-signature": secrets.map((s) => sign(s, id, ts, body)).join(" "),
  };
  return { body, headers };
}

test("a correctly signed delivery verifies and returns the typed payload", () => {
  const { body, headers } = delivery();
  const event = verifyWebhook(body, headers, SECRET);
  assert.equal(event.event.type, "account-created");
  assert.equal(event.account.name, "Acme");
});

test("headers given as a fetch Headers object, mixed-case keys or a Buffer body also verify", () => {
  const { body, headers } = delivery();
  const wh = new Webhooks(SECRET);
  assert.equal(wh.verify(body, new Headers(headers)).event.type, "account-created");
  const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
  assert.equal(wh.verify(Buffer.from(body), upper).event.type, "account-created");
});

test("a wrong signature, a changed body or a missing header is refused", () => {
  const { body, headers } = delivery();
  const refuse = (b, h, reason) =>
    assert.throws(() => verifyWebhook(b, h, SECRET), (e) => e instanceof WebhookVerificationError && e.reason === reason);
  refuse(body, { ...headers, "webhook-signature": sign(newSecret(), headers["webhook-id"], headers["webhook-timestamp"], body) }, "bad_signature");
  refuse(body.replace("Acme", "Acne"), headers, "bad_signature");
  refuse(body, { ...headers, "webhook-id": "another" }, "bad_signature");
  const { "webhook-signature": _, ...unsigned } = headers;
  refuse(body, unsigned, "missing_headers");
});

test("a stale or future timestamp is refused even when the signature matches", () => {
  const old = delivery({ ts: Math.floor(Date.now() / 1000) - 6 * 60 });
  assert.throws(() => verifyWebhook(old.body, old.headers, SECRET), (e) => e.reason === "timestamp_too_old");
  const future = delivery({ ts: Math.floor(Date.now() / 1000) + 6 * 60 });
  assert.throws(() => verifyWebhook(future.body, future.headers, SECRET), (e) => e.reason === "timestamp_too_new");
});

test("during a rotation two signatures are sent: either secret verifies, a third does not", () => {
  const { body, headers } = delivery({ secrets: [SECRET, OLD] });
  assert.equal(headers["webhook-signature"].split(" ").length, 2);
  assert.equal(verifyWebhook(body, headers, SECRET).event.type, "account-created");
  assert.equal(verifyWebhook(body, headers, OLD).event.type, "account-created");
  assert.equal(new Webhooks([newSecret(), OLD]).verify(body, headers).event.type, "account-created");
  assert.throws(() => verifyWebhook(body, headers, newSecret()), WebhookVerificationError);
});

test("a signed body that is not an event is refused as invalid_payload", () => {
  const id = "x", ts = Math.floor(Date.now() / 1000), body = '{"hello":1}';
  const headers = { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": sign(SECRET, id, ts, body) };
  assert.throws(() => verifyWebhook(body, headers, SECRET), (e) => e.reason === "invalid_payload");
});

// Integration tests against a running Revops (`revops dev`). They run only when
// REVOPS_BASE_URL and REVOPS_API_KEY (a secret *sandbox* key) are set. They create their
// own objects (random names and ids), never rely on earlier runs, and delete the webhook
// endpoints and meters they make: an environment holds at most 16 endpoints and 32 meters,
// and the Go client's suite may be running against the same server at the same time.
//
// The webhook test serves HTTPS (Revops delivers to https:// only) with a certificate it
// issues from the dev server's local CA, read from REVOPS_DATA_DIR (`revops dev
// --data-dir`), using the openssl command.
import { test, describe, before } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer as createHttpServer } from "node:http";
import { isEventType, Revops, RevopsError, verifyWebhook } from "../dist/index.js";
import { httpsReceiver } from "./receiver.mjs";

const { REVOPS_BASE_URL: baseUrl, REVOPS_API_KEY: apiKey, REVOPS_DATA_DIR: dataDir } = process.env;
const skip = !baseUrl || !apiKey ? "set REVOPS_BASE_URL and REVOPS_API_KEY (a secret sandbox key) to run" : false;
const tag = () => `ts-${randomUUID().slice(0, 8)}`;

/** Polls fn every 250 ms until it returns something, for at most ms (work through Temporal on a possibly loaded machine). */
async function eventually(fn, ms = 90_000) {
  for (const deadline = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 250))) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`not reached within ${ms} ms`);
  }
}

describe("against a running Revops", { skip }, () => {
  let revops;
  before(async () => {
    revops = new Revops({ maxRetries: 5 });
    const who = await revops.whoami();
    assert.equal(who.type, "secret");
    assert.equal(who.environment, "sandbox", "run the integration tests with a sandbox key");
  });

  test("openapi.json and event types", async () => {
    const doc = await revops.getOpenAPI();
    assert.match(String(doc.openapi), /^3\.1/);
    const types = await revops.listEventTypes();
    const names = types.data.map((t) => t.name);
    for (const n of ["deal-created", "deal-updated", "deal-signed", "deal-active", "account-created", "account-updated", "account-deleted", "endpoint-disabled"]) {
      assert.ok(names.includes(n), n);
    }
  });

  test("account lifecycle: create, read, update, activate, list, deprovision", async () => {
    const externalId = tag();
    const created = await revops.createAccount({ name: "Acme TS", external_id: externalId, properties: { tier: "gold", seats: 5 } });
    assert.equal(created.status, "draft");
    assert.equal((await revops.getAccount(created.id)).external_id, externalId);
    const updated = await revops.updateAccount(created.id, { domain: "acme.example", properties: { seats: null } });
    assert.equal(updated.domain, "acme.example");
    assert.deepEqual(updated.properties, { tier: "gold" });
    assert.equal((await revops.activateAccount(created.id)).status, "active");
    const listed = await revops.listAccounts({ external_id: externalId });
    assert.deepEqual(listed.data.map((a) => a.id), [created.id]);
    assert.equal((await revops.deprovisionAccount(created.id)).status, "deprovisioned");
    const err = await revops.updateAccount(created.id, { name: "again" }).catch((e) => e);
    assert.ok(err instanceof RevopsError);
    assert.equal(err.status, 409);
    const missing = await revops.getAccount(randomUUID()).catch((e) => e);
    assert.equal(missing.code, "resource_missing");
    assert.ok(missing.requestId);
  });

  test("deal from draft to active, another voided, a wrong move a typed 409", async () => {
    const account = await revops.createAccount({ name: "Deal TS" });
    const deal = await revops.createDeal({ customer: { id: account.id }, opportunity_id: tag() });
    assert.equal(deal.status, "draft");
    assert.equal(deal.customer.id, account.id);
    const edited = await revops.updateDeal(deal.id, { net_price: "19999.00", net_price_currency: "USD", net_price_precision: "2" });
    assert.equal(edited.net_price, "19999.00");
    const wrong = await revops.approveDeal(deal.id).catch((e) => e);
    assert.ok(wrong instanceof RevopsError);
    assert.equal(wrong.code, "invalid_state_transition");
    assert.equal(wrong.type, "invalid_request_error");
    assert.equal((await revops.submitDeal(deal.id)).status, "pending_approval");
    assert.equal((await revops.approveDeal(deal.id)).status, "approved");
    assert.equal((await revops.signDeal(deal.id)).status, "signed");
    assert.equal((await revops.activateDeal(deal.id)).status, "active");
    assert.equal((await revops.getAccount(account.id)).status, "active", "activating a deal activates its draft account");
    const other = await revops.createDeal({ customer: { id: account.id }, submit: true });
    assert.equal(other.status, "pending_approval");
    assert.equal((await revops.voidDeal(other.id)).status, "void");
  });

  test("a paged list walked to the end with a small limit", async () => {
    const account = await revops.createAccount({ name: "Pages TS" });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await revops.createDeal({ customer: { id: account.id } })).id);
    const seen = [];
    for await (const deal of revops.listDealsAll({ customer: account.id, limit: 2 })) seen.push(deal.id);
    assert.deepEqual(seen.sort(), ids.sort());
  });

  test("usage: ingest (and its duplicate), list, summary", async () => {
    const accountId = tag(), transactionId = randomUUID();
    const body = {
      transaction_id: transactionId,
      mode: "increment",
      event_metrics: [{ account_id: accountId, product: "api", metric_name: "calls", metric_value: 3, metric_resolution: "day" }],
    };
    const first = await revops.ingestUsage(body);
    assert.equal(first.duplicate, false);
    assert.equal(first.metrics_accepted, 1);
    assert.equal((await revops.ingestUsage(body)).duplicate, true);
    const rows = await revops.listUsageEvents({ transaction_id: transactionId });
    assert.equal(rows.data.length, 1);
    assert.equal(rows.data[0].account_id, accountId);
    const summary = await revops.usageSummary({ resolution: "day", account_id: accountId });
    assert.deepEqual(summary.data.map((r) => Number(r.value)), [3]);
  });

  test("meters: create, read, list, update, values (both pages styles), alerts, delete", async (t) => {
    const key = tag(), metric = `m_${key}`, accountId = tag();
    // Yesterday's window, with rows stamped at its noon: no race with midnight.
    const day = new Date(); day.setUTCHours(0, 0, 0, 0); day.setUTCDate(day.getUTCDate() - 1);
    const noon = new Date(day.getTime() + 12 * 3_600_000).toISOString();
    await revops.ingestUsage({
      transaction_id: randomUUID(),
      mode: "increment",
      event_metrics: [1, 2, 3].map((v, i) => ({ account_id: `${accountId}-${i}`, product: "api", metric_name: metric, metric_value: v, metric_resolution: "minute", timestamp: noon })),
    });
    const meter = await revops.createMeter({ key, filter: { metric_name: metric }, aggregation: "sum" });
    t.after(() => revops.deleteMeter(key).catch(() => {}));
    assert.equal(meter.key, key);
    assert.equal((await revops.getMeter(key)).aggregation, "sum");
    assert.equal((await revops.updateMeter(key, { description: "from the TS suite" })).description, "from the TS suite");
    let found = false;
    for await (const m of revops.listMetersAll({ limit: 10 })) if (m.key === key) found = true;
    assert.ok(found, "listMetersAll finds the new meter");

    const query = { from: day.toISOString(), to: new Date(day.getTime() + 86_400_000).toISOString(), window: "day", limit: 1 };
    let rows = [];
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      rows = [];
      for await (const row of revops.meterValuesAll(key, query)) rows.push(row);
      if (rows.length === 3) break;
    }
    assert.deepEqual(rows.map((r) => Number(r.value)).sort(), [1, 2, 3], "three accounts, one row a page");

    // Usage alerts of the meter (CONTRACT §24).
    const alert = await revops.createMeterAlert(key, { threshold: "1000.50", window: "month", account_id: `${accountId}-0`, description: "TS" });
    assert.equal(alert.object, "meter_alert");
    assert.equal(alert.meter, key);
    assert.equal(alert.threshold, 1000.5);
    assert.deepEqual(alert.group, {});
    const daily = await revops.createMeterAlert(key, { threshold: 10, window: "day" });
    assert.equal(daily.account_id, null);
    assert.equal((await revops.getMeterAlert(key, alert.id)).window, "month");
    const listed = [];
    for await (const a of revops.listMeterAlertsAll(key, { limit: 1 })) listed.push(a.id);
    assert.deepEqual(listed, [daily.id, alert.id]);
    await assert.rejects(revops.createMeterAlert(key, { threshold: 0, window: "day" }), (e) => e instanceof RevopsError && e.code === "parameter_invalid");
    assert.equal((await revops.deleteMeterAlert(key, alert.id)).deleted, true);
    await assert.rejects(revops.getMeterAlert(key, alert.id), (e) => e instanceof RevopsError && e.status === 404);

    const deleted = await revops.deleteMeter(key);
    assert.equal(deleted.deleted, true);
  });

  test("webhook endpoints: create, read, list, update, secret, rotate, test, delete; events, replay, bulk replay", async (t) => {
    const description = tag();
    const created = await revops.createWebhookEndpoint({ url: "https://127.0.0.1:9/never", description, event_types: ["account-created"], enabled: false });
    t.after(() => revops.deleteWebhookEndpoint(created.id).catch(() => {}));
    assert.match(created.secret, /^whsec_/);
    assert.equal((await revops.getWebhookEndpointById(created.id)).description, description);
    let listed = false;
    for await (const e of revops.listWebhookEndpointsAll({ limit: 5 })) if (e.id === created.id) listed = true;
    assert.ok(listed);
    assert.equal((await revops.updateWebhookEndpoint(created.id, { description: `${description}!` })).description, `${description}!`);
    const secret = await revops.getWebhookEndpointSecret(created.id);
    assert.equal(secret.secret, created.secret);
    const rotated = await revops.rotateWebhookEndpointSecret(created.id);
    assert.notEqual(rotated.secret, created.secret);
    const sent = await revops.testWebhookEndpointById(created.id, { type: "deal-signed" });
    assert.equal(sent.ok, false, "nothing listens on port 9");

    // The singular §8 routes act on the environment's oldest endpoint, which another suite
    // may own: only read them here.
    await revops.getWebhookEndpoint().catch((e) => assert.equal(e.code, "resource_missing"));

    // Replays target only this (disabled) endpoint, so nothing reaches the receivers of
    // another suite: the delivery ends failed with endpoint_disabled, without a request.
    const account = await revops.createAccount({ name: "Events TS" });
    const events = await revops.listEvents({ object_id: account.id, type: "account-created" });
    assert.equal(events.data.length, 1);
    const event = await revops.getEvent(events.data[0].id);
    assert.equal(event.object_id, account.id);
    const replayed = await revops.replayEvent(event.id, { endpoint_id: created.id });
    assert.equal(replayed.id, event.id);
    const failed = await eventually(async () => {
      const e = await revops.getEvent(event.id);
      return e.deliveries?.find((d) => d.endpoint_id === created.id && d.status === "failed");
    });
    assert.equal(failed.attempts.at(-1).error, "endpoint_disabled");
    // That attempt sent nothing (skipped): the endpoint's stats count no window.
    const hour = Math.floor(Date.now() / 3600000) * 3600000;
    const stats = await revops.getWebhookEndpointStats(created.id, {
      from: new Date(hour - 3600000).toISOString(), to: new Date(hour + 3600000).toISOString(), window: "hour",
    });
    assert.equal(stats.object, "endpoint_stats");
    assert.deepEqual(stats.data, []);

    const job = await revops.replayEvents({ endpoint_id: created.id, status: "failed", created_after: Math.floor(Date.now() / 1000) - 300 });
    assert.equal(job.object, "replay_job");
    const done = await eventually(async () => {
      const j = await revops.getReplayJob(job.id);
      return j.status === "done" ? j : undefined;
    });
    assert.ok(done.matched >= 1, `bulk replay matched ${done.matched}`);

    const gone = await revops.deleteWebhookEndpoint(created.id);
    assert.equal(gone.deleted, true);
  });

  test("a real 429 is retried after Retry-After", async () => {
    const attempts = new Map(); // call tag → [{ start, status, retryAfter, end }]
    const counting = async (url, init) => {
      const call = init.headers["X-Test-Call"];
      const record = { start: Date.now() };
      (attempts.get(call) ?? attempts.set(call, []).get(call)).push(record);
      const res = await fetch(url, init);
      Object.assign(record, { end: Date.now(), status: res.status, retryAfter: res.headers.get("retry-after") });
      return res;
    };
    const client = new Revops({ fetch: counting, maxRetries: 8 });
    let limited = [];
    for (let round = 0; round < 5 && limited.length === 0; round++) {
      const calls = Array.from({ length: 80 }, (_, i) => client.whoami({ headers: { "X-Test-Call": `${round}-${i}` } }));
      const results = await Promise.allSettled(calls);
      assert.deepEqual(results.filter((r) => r.status === "rejected").map((r) => String(r.reason)), [], "every call succeeded");
      limited = [...attempts.values()].filter((list) => list.some((a) => a.status === 429));
    }
    assert.ok(limited.length > 0, "no 429 seen: run the server with a low REVOPS_RATE_LIMIT (e.g. 20)");
    for (const list of limited) {
      for (let i = 0; i + 1 < list.length; i++) {
        if (list[i].status !== 429) continue;
        assert.ok(list[i].retryAfter, "a 429 carries Retry-After");
        const waited = list[i + 1].start - list[i].end;
        // Date.now() is whole milliseconds and Node's timers keep their own clock: a sleep
        // of exactly 1000 ms can read as 999 (seen in CI). One millisecond of reading is
        // allowed; a retry that ignored Retry-After would come hundreds of ms early.
        assert.ok(waited >= Number(list[i].retryAfter) * 1000 - 1, `retried after ${waited} ms, Retry-After ${list[i].retryAfter} s`);
      }
      assert.equal(list.at(-1).status, 200);
    }
  });

  test("a 5xx after the change is retried with the same key and changes nothing twice", async (t) => {
    // A proxy that forwards every request to Revops but answers the first POST with 502,
    // as if the answer were lost on the way back.
    const keys = [];
    let failed = false;
    const proxy = createHttpServer(async (req, res) => {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const headers = { ...req.headers };
      delete headers.host;
      delete headers["content-length"];
      const upstream = await fetch(baseUrl + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const text = await upstream.text();
      // Only an answer that did the work is lost. A refusal (a 429: the key's budget is
      // shared with the suite's other tests) reaches the client, which sends again.
      if (req.method === "POST" && !upstream.ok) {
        const passed = { "Content-Type": upstream.headers.get("content-type") ?? "application/json" };
        if (upstream.headers.has("retry-after")) passed["Retry-After"] = upstream.headers.get("retry-after");
        res.writeHead(upstream.status, passed).end(text);
        return;
      }
      if (req.method === "POST") keys.push({ key: req.headers["idempotency-key"], status: upstream.status, replayed: upstream.headers.get("idempotent-replayed") });
      if (req.method === "POST" && !failed) {
        failed = true;
        res.writeHead(502, { "Content-Type": "text/plain" }).end("bad gateway");
        return;
      }
      res.writeHead(upstream.status, { "Content-Type": upstream.headers.get("content-type") ?? "application/json" }).end(text);
    });
    await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
    t.after(() => new Promise((r) => { proxy.closeAllConnections(); proxy.close(r); }));

    const client = new Revops({ baseUrl: `http://127.0.0.1:${proxy.address().port}` });
    const externalId = tag();
    const account = await client.createAccount({ name: "Retried TS", external_id: externalId });
    assert.equal(keys.length, 2, "the first attempt, then one retry");
    assert.equal(keys[0].key, keys[1].key, "both attempts carried one Idempotency-Key");
    assert.equal(keys[0].status, 201);
    assert.equal(keys[1].replayed, "true", "Revops replayed the first answer");
    const listed = await revops.listAccounts({ external_id: externalId });
    assert.deepEqual(listed.data.map((a) => a.id), [account.id], "exactly one account exists");
  });

  test("a webhook is received over HTTPS and verified", { skip: dataDir ? false : "set REVOPS_DATA_DIR to the dev server's data dir (its local CA signs the receiver's certificate)" }, async (t) => {
    const receiver = await httpsReceiver(dataDir);
    t.after(receiver.close);
    const endpoint = await revops.createWebhookEndpoint({ url: `${receiver.url}/hooks`, event_types: ["account-created"], description: tag() });
    t.after(() => revops.deleteWebhookEndpoint(endpoint.id).catch(() => {}));

    const account = await revops.createAccount({ name: "Webhook TS" });
    const delivery = await receiver.waitFor((d) => d.body.includes(account.id), 90_000);
    const event = verifyWebhook(delivery.body, delivery.headers, endpoint.secret);
    assert.equal(event.event.type, "account-created");
    assert.ok(isEventType(event, "account-created"));
    assert.equal(event.account.id, account.id);
    assert.equal(delivery.headers["webhook-id"], event.event.id);
    assert.throws(() => verifyWebhook(delivery.body, delivery.headers, "whsec_" + Buffer.alloc(32, 7).toString("base64")));
  });

  test("an ed25519 endpoint's v1a webhook verifies with its public key, both keys during a rotation", { skip: dataDir ? false : "set REVOPS_DATA_DIR to the dev server's data dir (its local CA signs the receiver's certificate)" }, async (t) => {
    const receiver = await httpsReceiver(dataDir);
    t.after(receiver.close);
    const endpoint = await revops.createWebhookEndpoint({ url: `${receiver.url}/hooks`, event_types: ["account-created"], description: tag(), signing: "ed25519" });
    t.after(() => revops.deleteWebhookEndpoint(endpoint.id).catch(() => {}));
    assert.equal(endpoint.signing, "ed25519");
    assert.match(endpoint.public_key, /^whpk_/);
    assert.equal(endpoint.secret, undefined, "an ed25519 endpoint shows no secret");

    const first = await revops.createAccount({ name: "Webhook TS ed25519" });
    const delivery = await receiver.waitFor((d) => d.body.includes(first.id), 90_000);
    assert.equal(verifyWebhook(delivery.body, delivery.headers, endpoint.public_key).account.id, first.id);

    const rotated = await revops.rotateWebhookEndpointSecret(endpoint.id);
    assert.match(rotated.public_key, /^whpk_/);
    assert.notEqual(rotated.public_key, endpoint.public_key);
    const second = await revops.createAccount({ name: "Webhook TS ed25519 rotated" });
    const after = await receiver.waitFor((d) => d.body.includes(second.id), 90_000);
    for (const key of [rotated.public_key, endpoint.public_key]) {
      assert.equal(verifyWebhook(after.body, after.headers, key).account.id, second.id);
    }
  });
});

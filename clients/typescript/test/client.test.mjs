// Unit tests of the transport against a local fake: retries, idempotency keys, errors,
// iterators, query encoding. `npm test` builds dist/ first.
import { test } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { readFileSync } from "node:fs";
import { Revops, RevopsError, RevopsConnectionError, VERSION } from "../dist/index.js";
import { fakeRevops, apiError } from "./fake.mjs";

const KEY = "sk_sandbox_0123456789abcdefghijABCDEFGHIJ01";
const ok = (json, status = 200) => ({ status, json });
const client = (fake, opts = {}) => new Revops({ apiKey: KEY, baseUrl: fake.url, ...opts });

test("a POST retried after 503s keeps one Idempotency-Key and returns the answer", async (t) => {
  const fake = await fakeRevops((_req, _body, n) => (n < 2 ? apiError(503, "api_error", "service_unavailable") : ok({ id: "a1", object: "account" }, 201)));
  t.after(fake.close);
  const account = await client(fake).createAccount({ name: "Acme" });
  assert.equal(account.id, "a1");
  assert.equal(fake.requests.length, 3);
  const key = fake.requests[0].headers["idempotency-key"];
  assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, "a random UUID");
  // Every attempt, retries included, is the same request: method, path, body and key.
  for (const [i, r] of fake.requests.entries()) {
    assert.equal(r.method, "POST", `attempt ${i}`);
    assert.equal(r.url, "/v1/accounts", `attempt ${i}`);
    assert.equal(r.body, '{"name":"Acme"}', `attempt ${i}: the same body`);
    assert.equal(r.headers["idempotency-key"], key, `attempt ${i}: the same Idempotency-Key`);
    assert.equal(r.headers["content-type"], "application/json", `attempt ${i}`);
    assert.equal(r.headers.authorization, `Bearer ${KEY}`, `attempt ${i}`);
  }
});

test("each call gets its own key; the caller's key is used as given; GET sends none", async (t) => {
  const fake = await fakeRevops(() => ok({ id: "x" }));
  t.after(fake.close);
  const c = client(fake);
  await c.activateAccount("a1");
  await c.activateAccount("a1");
  await c.activateAccount("a1", { idempotencyKey: "job-42" });
  await c.getAccount("a1");
  const [k1, k2, k3] = fake.requests.map((r) => r.headers["idempotency-key"]);
  assert.notEqual(k1, k2);
  assert.equal(k3, "job-42");
  assert.equal(fake.requests[3].headers["idempotency-key"], undefined);
  assert.equal(fake.requests[0].body, "", "an action without body sends no body");
  assert.equal(fake.requests[0].headers["content-type"], undefined);
});

test("429 waits for Retry-After before retrying, GETs included", async (t) => {
  const fake = await fakeRevops((_r, _b, n) => (n === 0 ? { ...apiError(429, "rate_limit_error", "rate_limited"), headers: { "Retry-After": "1" } } : ok({ object: "api_key" })));
  t.after(fake.close);
  const who = await client(fake).whoami();
  assert.equal(who.object, "api_key");
  assert.equal(fake.requests.length, 2);
  assert.ok(fake.requests[1].at - fake.requests[0].at >= 1000, "waited at least Retry-After");
});

test("a Retry-After longer than maxRetryAfter is thrown at once", async (t) => {
  const fake = await fakeRevops(() => ({ ...apiError(429, "rate_limit_error", "rate_limited"), headers: { "Retry-After": "120" } }));
  t.after(fake.close);
  const err = await client(fake).whoami().catch((e) => e);
  assert.ok(err instanceof RevopsError);
  assert.equal(err.status, 429);
  assert.equal(err.retryAfter, 120);
  assert.equal(fake.requests.length, 1);
});

test("409 idempotency_key_in_use is retried with the same key", async (t) => {
  const fake = await fakeRevops((_r, _b, n) => (n === 0 ? apiError(409, "invalid_request_error", "idempotency_key_in_use") : ok({ id: "d1" })));
  t.after(fake.close);
  await client(fake).signDeal("d1");
  assert.equal(fake.requests.length, 2);
  assert.equal(fake.requests[0].headers["idempotency-key"], fake.requests[1].headers["idempotency-key"]);
});

for (const [status, code] of [[400, "parameter_invalid"], [404, "resource_missing"], [409, "invalid_state_transition"], [409, "idempotency_key_reused"], [401, "invalid_api_key"]]) {
  test(`${status} ${code} is not retried`, async (t) => {
    const fake = await fakeRevops(() => apiError(status, status === 401 ? "authentication_error" : "invalid_request_error", code));
    t.after(fake.close);
    const err = await client(fake).approveDeal("d1").catch((e) => e);
    assert.ok(err instanceof RevopsError);
    assert.equal(err.code, code);
    assert.equal(fake.requests.length, 1);
  });
}

test("5xx retries stop after maxRetries and throw the last error", async (t) => {
  const fake = await fakeRevops(() => apiError(500, "api_error", "internal_error"));
  t.after(fake.close);
  const err = await client(fake, { maxRetries: 2 }).getDeal("d1").catch((e) => e);
  assert.ok(err instanceof RevopsError);
  assert.equal(err.status, 500);
  assert.equal(fake.requests.length, 3);
});

test("maxRetries, timeout and maxRetryAfter are checked when the client is made", () => {
  const make = (opts) => () => new Revops({ apiKey: KEY, baseUrl: "http://127.0.0.1:9", ...opts });
  for (const [name, bad, kind] of [
    ["maxRetries", Number(undefined), TypeError],
    ["maxRetries", "3", TypeError],
    ["maxRetries", -1, RangeError],
    ["maxRetries", 1.5, RangeError],
    ["maxRetries", Infinity, RangeError],
    ["timeout", NaN, TypeError],
    ["timeout", "1000", TypeError],
    ["timeout", 0, RangeError],
    ["timeout", -5, RangeError],
    ["timeout", Infinity, RangeError],
    ["timeout", 2 ** 31, RangeError],
    ["maxRetryAfter", NaN, TypeError],
    ["maxRetryAfter", 0, RangeError],
    ["maxRetryAfter", Infinity, RangeError],
  ]) {
    assert.throws(make({ [name]: bad }), (err) => err instanceof kind && err.message.includes(name), `${name}: ${String(bad)}`);
  }
  const c = make({ maxRetries: 0, timeout: 1, maxRetryAfter: 0.5 })();
  assert.deepEqual([c.maxRetries, c.timeout, c.maxRetryAfter], [0, 1, 0.5]);
  const d = make({ maxRetries: undefined, timeout: undefined, maxRetryAfter: undefined })();
  assert.deepEqual([d.maxRetries, d.timeout, d.maxRetryAfter], [3, 60_000, 60], "undefined means the default");
});

test("a call's maxRetries and timeout are checked before anything is sent", async (t) => {
  const fake = await fakeRevops(() => apiError(503, "api_error", "service_unavailable"));
  t.after(fake.close);
  const c = client(fake);
  for (const [opts, kind] of [
    [{ maxRetries: Number(undefined) }, TypeError],
    [{ maxRetries: -1 }, RangeError],
    [{ maxRetries: 0.5 }, RangeError],
    [{ timeout: NaN }, TypeError],
    [{ timeout: 0 }, RangeError],
    [{ timeout: Infinity }, RangeError],
  ]) {
    const name = `options.${Object.keys(opts)[0]}`;
    await assert.rejects(c.createAccount({ name: "Acme" }, opts), (err) => err instanceof kind && err.message.includes(name), JSON.stringify(opts));
  }
  assert.equal(fake.requests.length, 0, "nothing was sent");
  const err = await c.getDeal("d1", { maxRetries: 0, timeout: 5_000.5 }).catch((e) => e);
  assert.ok(err instanceof RevopsError && err.status === 503, String(err));
  assert.equal(fake.requests.length, 1, "maxRetries: 0 is one attempt; a fractional timeout is fine");
});

test("a dropped connection is retried; an unreachable server ends in RevopsConnectionError", async (t) => {
  const fake = await fakeRevops((_r, _b, n) => (n === 0 ? "destroy" : ok({ id: "m" })));
  t.after(fake.close);
  assert.equal((await client(fake).getMeter("m")).id, "m");
  assert.equal(fake.requests.length, 2);

  const dead = new Revops({ apiKey: KEY, baseUrl: "http://127.0.0.1:9", maxRetries: 1 });
  const err = await dead.whoami().catch((e) => e);
  assert.ok(err instanceof RevopsConnectionError, String(err));
  assert.match(err.message, /GET \/v1\/whoami: .*after 2 attempts/);
  assert.ok(!err.message.includes(KEY));
});

test("a slow attempt times out and is retried", async (t) => {
  const fake = await fakeRevops(async (_r, _b, n) => {
    if (n === 0) await new Promise((r) => setTimeout(r, 500));
    return ok({ object: "api_key" });
  });
  t.after(fake.close);
  await client(fake, { timeout: 200 }).whoami();
  assert.equal(fake.requests.length, 2);
});

test("RevopsError carries the §4 fields, falls back to X-Request-Id, never the key", async (t) => {
  const faults = [{ param: "name", code: "parameter_missing", message: "name is required" }];
  const fake = await fakeRevops((_r, _b, n) =>
    n === 0
      ? apiError(400, "invalid_request_error", "parameter_missing", { param: "name", errors: faults })
      : { status: 404, headers: { "X-Request-Id": "req_only_header" }, json: { error: { type: "invalid_request_error", code: "resource_missing", message: "No such deal.", request_id: "" } } },
  );
  t.after(fake.close);
  const c = client(fake);
  const err = await c.createAccount({}).catch((e) => e);
  assert.ok(err instanceof RevopsError && err instanceof Error);
  assert.deepEqual(
    { status: err.status, type: err.type, code: err.code, param: err.param, requestId: err.requestId, errors: err.errors },
    { status: 400, type: "invalid_request_error", code: "parameter_missing", param: "name", requestId: "req_body", errors: faults },
  );
  const err2 = await c.getDeal("nope").catch((e) => e);
  assert.equal(err2.requestId, "req_only_header");
  for (const text of [String(err), JSON.stringify(err), inspect(err), inspect(c), JSON.stringify(c)]) {
    assert.ok(!text.includes(KEY), "the key leaked");
  }
});

test("a non-JSON error body (a proxy's 502) still becomes a RevopsError", async (t) => {
  const fake = await fakeRevops(() => ({ status: 502, text: "<html>bad gateway</html>" }));
  t.after(fake.close);
  const err = await client(fake, { maxRetries: 0 }).whoami().catch((e) => e);
  assert.equal(err.status, 502);
  assert.equal(err.type, "api_error");
  assert.equal(err.code, "unexpected_response");
  assert.equal(err.message, "HTTP 502 Bad Gateway without a Revops error body");
});

test("a body that is not the error envelope never reaches the message (a proxy echoing the key)", async (t) => {
  // A debugging proxy that echoes the request, headers included, as JSON or as text.
  const fake = await fakeRevops((req, _b, n) => {
    const echo = `${req.method} ${req.url}\nAuthorization: ${req.headers.authorization}\nsecret-marker`;
    return n === 0 ? { status: 400, json: { echo, error: "bad request" } } : { status: 403, text: echo };
  });
  t.after(fake.close);
  const c = client(fake, { maxRetries: 0 });
  for (const [status, text] of [[400, "Bad Request"], [403, "Forbidden"]]) {
    const err = await c.whoami().catch((e) => e);
    assert.ok(err instanceof RevopsError, String(err));
    assert.equal(err.status, status);
    assert.equal(err.code, "unexpected_response");
    assert.equal(err.message, `HTTP ${status} ${text} without a Revops error body`);
    for (const shown of [String(err), err.stack, inspect(err), JSON.stringify(err)]) {
      assert.ok(!shown.includes(KEY), "the key leaked");
      assert.ok(!shown.includes("secret-marker"), "the body leaked");
    }
  }
});

// The wait asked for is 30 s; the test's own timeout (10 s) fails it if the abort does not
// end that wait (a behaviour, not a measured duration).
test("an abort during the wait between retries ends the call at once", { timeout: 10_000 }, async (t) => {
  const fake = await fakeRevops(() => ({ ...apiError(429, "rate_limit_error", "rate_limited"), headers: { "Retry-After": "30" } }));
  t.after(fake.close);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  const err = await client(fake).whoami({ signal: ac.signal }).catch((e) => e);
  assert.equal(err.name, "AbortError");
});

test("listDealsAll walks every page with starting_after", async (t) => {
  const all = Array.from({ length: 7 }, (_, i) => ({ id: `d${i}`, object: "deal" }));
  const fake = await fakeRevops((req) => {
    const q = new URL(req.url, "http://x").searchParams;
    const start = q.has("starting_after") ? all.findIndex((d) => d.id === q.get("starting_after")) + 1 : 0;
    const limit = Number(q.get("limit"));
    return ok({ object: "list", data: all.slice(start, start + limit), has_more: start + limit < all.length });
  });
  t.after(fake.close);
  const seen = [];
  for await (const deal of client(fake).listDealsAll({ limit: 3, status: "draft" })) seen.push(deal.id);
  assert.deepEqual(seen, all.map((d) => d.id));
  assert.deepEqual(fake.requests.map((r) => r.url), [
    "/v1/deals?limit=3&status=draft",
    "/v1/deals?limit=3&status=draft&starting_after=d2",
    "/v1/deals?limit=3&status=draft&starting_after=d5",
  ]);
});

test("meterValuesAll follows next_page; filter is sent as deepObject; path ids are encoded", async (t) => {
  const pages = { "": ["p1", "w0"], p1: ["p2", "w1"], p2: [null, "w2"] };
  const fake = await fakeRevops((req) => {
    const q = new URL(req.url, "http://x").searchParams;
    const [next, row] = pages[q.get("page") ?? ""];
    return ok({ object: "meter_values", meter: "api/calls", window: "day", as_of: "t", data: [{ window_start: row }], has_more: next !== null, next_page: next });
  });
  t.after(fake.close);
  const rows = [];
  const query = { from: "2026-11-01T00:00:00Z", to: "2026-11-04T00:00:00Z", window: "day", filter: { region: "eu" } };
  for await (const row of client(fake).meterValuesAll("api/calls", query)) rows.push(row.window_start);
  assert.deepEqual(rows, ["w0", "w1", "w2"]);
  const first = new URL(fake.requests[0].url, "http://x");
  assert.equal(first.pathname, "/v1/meters/api%2Fcalls/values");
  assert.equal(first.searchParams.get("filter[region]"), "eu");
  assert.equal(new URL(fake.requests[2].url, "http://x").searchParams.get("page"), "p2");
});

test("meterValuesAll stops when next_page is empty or repeats the page just read", async (t) => {
  // p2 names itself as next page: a server bug that must not loop; "" ends a walk as null does.
  const pages = { "": ["p1", "w0"], p1: ["p2", "w1"], p2: ["p2", "w2"], q: ["", "w3"] };
  const fake = await fakeRevops((req) => {
    const [next, row] = pages[new URL(req.url, "http://x").searchParams.get("page") ?? ""];
    return ok({ object: "meter_values", meter: "m", window: "day", as_of: "t", data: [{ window_start: row }], has_more: true, next_page: next });
  });
  t.after(fake.close);
  const c = client(fake);
  const query = { from: "2026-11-01T00:00:00Z", to: "2026-11-04T00:00:00Z", window: "day" };
  const walk = async (q) => {
    const rows = [];
    for await (const row of c.meterValuesAll("m", q)) {
      rows.push(row.window_start);
      if (rows.length > 10) break; // the old loop: fail, do not hang
    }
    return rows;
  };
  assert.deepEqual(await walk(query), ["w0", "w1", "w2"]);
  assert.equal(fake.requests.length, 3, "p2 was read once");
  assert.deepEqual(await walk({ ...query, page: "p2" }), ["w2"], "a first page that names itself");
  assert.deepEqual(await walk({ ...query, page: "q" }), ["w3"]);
  assert.equal(fake.requests.length, 5);
});

test("the client reads REVOPS_API_KEY and REVOPS_BASE_URL, and refuses to start without a key", async (t) => {
  const saved = { key: process.env.REVOPS_API_KEY, url: process.env.REVOPS_BASE_URL };
  t.after(() => {
    for (const [name, v] of [["REVOPS_API_KEY", saved.key], ["REVOPS_BASE_URL", saved.url]]) {
      if (v === undefined) delete process.env[name];
      else process.env[name] = v;
    }
  });
  delete process.env.REVOPS_API_KEY;
  assert.throws(() => new Revops(), /REVOPS_API_KEY/);
  process.env.REVOPS_API_KEY = KEY;
  process.env.REVOPS_BASE_URL = "http://example.test:1234/";
  assert.equal(new Revops().baseUrl, "http://example.test:1234");
  assert.equal(new Revops({ baseUrl: "http://other" }).baseUrl, "http://other");
});

test("VERSION matches package.json", () => {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  assert.equal(VERSION, pkg.version);
});

test("a 2xx answer that is not JSON is an error of the answer, not retried as a network error", async (t) => {
  const fake = await fakeRevops(() => ({ status: 200, text: "<html>a proxy page</html>" }));
  t.after(fake.close);
  const err = await client(fake).createAccount({ name: "Acme" }).catch((e) => e);
  assert.ok(err instanceof SyntaxError, `got ${err}`);
  assert.equal(fake.requests.length, 1);
});

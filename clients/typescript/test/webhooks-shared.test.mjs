// The signature cases the Go, TypeScript and Python suites all verify
// (clients/testdata/webhook-signatures.json), so that the three clients accept and refuse
// the same deliveries. Its signatures are Revops's own: internal/platform/signing's test
// checks that its signing still makes them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Webhooks, WebhookVerificationError } from "../dist/index.js";

const table = JSON.parse(readFileSync(new URL("../../testdata/webhook-signatures.json", import.meta.url), "utf8"));

/** Runs fn with Date.now reading the case's clock (Unix seconds). */
function at(seconds, fn) {
  const real = Date.now;
  Date.now = () => seconds * 1000;
  try {
    return fn();
  } finally {
    Date.now = real;
  }
}

test("the shared table has its cases", () => {
  assert.ok(table.cases.length >= 30, `${table.cases.length} cases`);
});

for (const c of table.cases) {
  test(`shared case: ${c.name}`, () => {
    const hooks = new Webhooks(c.key);
    let event;
    try {
      event = at(c.now, () => hooks.verify(c.body, c.headers));
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      assert.equal(err.reason, c.want, err.message);
      return;
    }
    assert.equal(c.want, "ok", "verified");
    assert.equal(event.event.id, "msg_p5jXN8AQM9LWM0D4loKWxJek");
  });
}

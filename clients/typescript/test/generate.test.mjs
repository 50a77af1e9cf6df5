// The committed src/generated/ must be what the generator makes from the document, both
// the repository's and (with REVOPS_BASE_URL and REVOPS_API_KEY) the one the server serves.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const pkg = fileURLToPath(new URL("..", import.meta.url));
const generate = (...args) => run(process.execPath, ["tools/generate.mjs", ...args], { cwd: pkg, env: process.env });
const docPath = fileURLToPath(new URL("../../../api/openapi/openapi.json", import.meta.url));

test("src/generated matches api/openapi/openapi.json", async () => {
  await generate("--check").catch((err) => assert.fail(err.stderr));
});

test("a changed document makes the check fail, naming the stale files", async (t) => {
  const doc = JSON.parse(readFileSync(docPath, "utf8"));
  doc.paths["/v1/ping"] = { get: { operationId: "ping", responses: { 200: { description: "pong" } } } };
  const dir = mkdtempSync(join(tmpdir(), "revops-ts-drift-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc));
  const err = await generate(join(dir, "openapi.json"), "--check").then(() => null, (e) => e);
  assert.ok(err, "the check passed on a changed document");
  assert.equal(err.code, 1);
  assert.match(err.stderr, /out of date[\s\S]*src\/generated\/operations\.ts[\s\S]*npm run generate/);
});

test("src/generated matches the document the server serves", { skip: process.env.REVOPS_BASE_URL && process.env.REVOPS_API_KEY ? false : "set REVOPS_BASE_URL and REVOPS_API_KEY" }, async () => {
  const url = `${process.env.REVOPS_BASE_URL.replace(/\/+$/, "")}/v1/openapi.json`;
  await generate(url, "--check").catch((err) => assert.fail(err.stderr));
});

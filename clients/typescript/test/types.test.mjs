// Programs written against the package as users write them: test/consumer/main.ts and the
// README's first example are compiled with `tsc --strict` (importing "@revops/client" by
// name) and run; with REVOPS_BASE_URL and REVOPS_API_KEY set they also call the server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const pkg = fileURLToPath(new URL("..", import.meta.url));
const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
const live = Boolean(process.env.REVOPS_BASE_URL && process.env.REVOPS_API_KEY);

async function compile(project) {
  try {
    await run(process.execPath, [tsc, "-p", project], { cwd: pkg });
  } catch (err) {
    assert.fail(`tsc --strict failed for ${project}:\n${err.stdout}${err.stderr}`);
  }
}

async function runNode(file) {
  // The server's answer goes to stdout; a failure shows the program's stderr.
  try {
    return (await run(process.execPath, [file], { cwd: pkg, env: process.env, timeout: 120_000 })).stdout;
  } catch (err) {
    assert.fail(`${file} failed:\n${err.stdout}${err.stderr}`);
  }
}

test("a consumer program type-checks under --strict and runs", async () => {
  await compile("test/consumer/tsconfig.json");
  const out = await runNode("test/.tmp/consumer/main.js");
  assert.match(out, /refused webhook: timestamp_too_old/);
  if (live) assert.match(out, /typed error 404 resource_missing/);
});

test("the README's first example type-checks under --strict and runs against the server", async (t) => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const match = readme.match(/```ts\n([\s\S]*?)```/);
  assert.ok(match, "README.md has a ```ts block");
  assert.ok(readme.trimStart().startsWith("# @revops/client\n\n```ts"), "README.md starts with the example");
  const dir = new URL("./.tmp/readme/", import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL("example.ts", dir), match[1]);
  writeFileSync(new URL("tsconfig.json", dir), JSON.stringify({
    compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, rootDir: ".", outDir: "out", types: ["node"] },
    files: ["example.ts"],
  }));
  await compile("test/.tmp/readme/tsconfig.json");
  if (!live) return t.skip("type-checked only: set REVOPS_BASE_URL and REVOPS_API_KEY to run it");
  const out = await runNode("test/.tmp/readme/out/example.js");
  assert.match(out, /refused: 409 invalid_state_transition/);
  assert.match(out, /now active/);
});

// Programs written against the package as users write them: test/consumer/main.ts and the
// README's first example are compiled with `tsc --strict` and run in an application of
// their own, outside this folder, that installed the package from its `npm pack` tarball
// (importing "@revops/client" by name, through the tarball's `exports`, types and
// dependencies). With REVOPS_BASE_URL and REVOPS_API_KEY set they also call the server.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { application, installedAt, pack, pinned, tempDir } from "./install.mjs";

const run = promisify(execFile);
const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
const live = Boolean(process.env.REVOPS_BASE_URL && process.env.REVOPS_API_KEY);

let app; // the consumer application, with the tarball installed

before(async (t) => {
  const dir = tempDir(t, "consumer");
  const tarball = await pack(dir);
  app = await application(join(dir, "app"), tarball, pinned("@types/node"));
  // A copy, not a link back here: the program must import what the tarball holds.
  assert.ok(installedAt(app).startsWith(realpathSync(app) + sep), `@revops/client resolves to ${installedAt(app)}`);
});

async function compile(project) {
  try {
    await run(process.execPath, [tsc, "-p", project], { cwd: app });
  } catch (err) {
    assert.fail(`tsc --strict failed for ${project}:\n${err.stdout}${err.stderr}`);
  }
}

async function runNode(file) {
  // The server's answer goes to stdout; a failure shows the program's stderr.
  try {
    return (await run(process.execPath, [file], { cwd: app, env: process.env, timeout: 120_000 })).stdout;
  } catch (err) {
    assert.fail(`${file} failed:\n${err.stdout}${err.stderr}`);
  }
}

test("a consumer program type-checks under --strict and runs", async () => {
  for (const file of ["main.ts", "tsconfig.json"]) copyFileSync(new URL(`./consumer/${file}`, import.meta.url), join(app, file));
  await compile("tsconfig.json");
  const out = await runNode("out/main.js");
  assert.match(out, /refused webhook: timestamp_too_old/);
  if (live) assert.match(out, /typed error 404 resource_missing/);
});

test("the README's first example type-checks under --strict and runs against the server", async (t) => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const match = readme.match(/```ts\n([\s\S]*?)```/);
  assert.ok(match, "README.md has a ```ts block");
  assert.ok(readme.trimStart().startsWith("# @revops/client\n\n```ts"), "README.md starts with the example");
  writeFileSync(join(app, "example.ts"), match[1]);
  writeFileSync(join(app, "readme.tsconfig.json"), JSON.stringify({
    compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, rootDir: ".", outDir: "out", types: ["node"] },
    files: ["example.ts"],
  }));
  await compile("readme.tsconfig.json");
  if (!live) return t.skip("type-checked only: set REVOPS_BASE_URL and REVOPS_API_KEY to run it");
  const out = await runNode("out/example.js");
  assert.match(out, /refused: 409 invalid_state_transition/);
  assert.match(out, /now active/);
});

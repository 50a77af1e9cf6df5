// A fresh clone of the repository installs from its folder, as the README says:
// `npm install /path/to/clients/typescript` in an application. npm links the folder and
// runs its `prepare` there without installing any of its dependencies, so `prepare`
// (tools/prepare.mjs) must install the pinned tools itself before it builds dist/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { application, freshCopy, installedAt, tempDir } from "./install.mjs";

const run = promisify(execFile);

test("a fresh clone's folder installs into an application and imports", async (t) => {
  const dir = tempDir(t, "folder");
  const clone = freshCopy(join(dir, "clone"));
  const app = await application(join(dir, "app"), clone);
  assert.equal(installedAt(app), realpathSync(clone), "npm links a folder dependency");
  const program = 'import { Revops, verifyWebhook } from "@revops/client"; console.log(typeof Revops, typeof verifyWebhook);';
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", program], { cwd: app });
  assert.equal(stdout.trim(), "function function");
});

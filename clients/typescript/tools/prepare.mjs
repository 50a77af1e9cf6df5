#!/usr/bin/env node
// The `prepare` script: builds dist/ with the package's pinned tools, installing them first
// when they are missing.
//
// npm runs `prepare` after `npm ci` here, before `npm pack` and `npm publish`, and in the
// package's folder when an application installs it from a path
// (`npm install /path/to/clients/typescript`, linked or with --install-links). In that last
// case npm installs none of the folder's dependencies: in a fresh clone there is no
// node_modules/, so no tsc, and — for the default linked install — no `standardwebhooks`
// for dist/ to import at run time. npm does install them for a git dependency before its
// `prepare`; this does the same for a folder, from package-lock.json (`npm ci`), so the
// versions are the pinned ones.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const wanted = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
const missing = wanted.filter((name) => !existsSync(join(pkgDir, "node_modules", name, "package.json")));

if (missing.length > 0) {
  console.error(`@revops/client: installing its pinned dependencies (npm ci), missing: ${missing.join(", ")}`);
  // The installing npm passes its settings down as npm_config_* variables; these flags undo
  // the ones that would make this install wrong for a build: --omit=dev (or
  // NODE_ENV=production) would leave out tsc, -g makes npm ci refuse to run, and this
  // package's own scripts must not run again (`prepare` is this script).
  const args = ["ci", "--include=dev", "--global=false", "--ignore-scripts", "--no-audit", "--no-fund"];
  const npm = process.env.npm_execpath; // the npm that runs this script
  if (npm?.endsWith(".js")) run(process.execPath, [npm, ...args]);
  else run("npm", args);
}

run(process.execPath, [join(pkgDir, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"]);

function run(file, args) {
  try {
    execFileSync(file, args, { cwd: pkgDir, stdio: "inherit" });
  } catch (err) {
    // The command has printed its own error; exit with its status, without a stack trace.
    console.error(`@revops/client prepare: ${[file, ...args].join(" ")} failed`);
    process.exit(typeof err.status === "number" && err.status !== 0 ? err.status : 1);
  }
}

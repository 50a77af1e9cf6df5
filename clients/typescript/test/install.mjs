// Helpers that install the package the ways its users do, into projects outside this
// folder (so nothing resolves through this package's own name or node_modules/).
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);
export const pkgDir = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(pkgDir, "package-lock.json"), "utf8"));

// npm as the running `npm test` was started (npm_execpath), else the one on PATH. The
// cache is warm from `npm ci` here, so --prefer-offline installs without the network.
export async function npm(cwd, ...args) {
  const cli = process.env.npm_execpath;
  const [file, argv] = cli?.endsWith(".js") ? [process.execPath, [cli, ...args]] : ["npm", args];
  try {
    return (await exec(file, [...argv, "--prefer-offline", "--no-audit", "--no-fund"], { cwd, maxBuffer: 16 << 20 })).stdout;
  } catch (err) {
    throw new Error(`npm ${args.join(" ")} in ${cwd} failed:\n${err.stdout}${err.stderr}`);
  }
}

export function tempDir(t, name) {
  const dir = mkdtempSync(join(tmpdir(), `revops-client-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// The package as a fresh clone has it: no node_modules/, no dist/ (both git-ignored).
// The tests are left out too: they are not part of what gets installed.
export function freshCopy(dest) {
  cpSync(pkgDir, dest, {
    recursive: true,
    filter: (src) => !["node_modules", "dist", "test"].includes(relative(pkgDir, src).split(sep)[0]),
  });
  return dest;
}

// An application project in dir that depends on spec (a tarball or folder), with
// devDependencies (the exact versions this package pins). Every package also in this
// package's lockfile is held to the version locked there (overrides), so the consumer
// installs exactly what `npm ci` put in the cache.
export async function application(dir, spec, devDependencies = {}, ...flags) {
  mkdirSync(dir, { recursive: true });
  const overrides = {};
  for (const [path, entry] of Object.entries(lock.packages)) {
    const name = path.replace(/^node_modules\//, "");
    if (path.startsWith("node_modules/") && !name.includes("node_modules/")) overrides[name] = entry.version;
  }
  for (const name of Object.keys(devDependencies)) delete overrides[name]; // pinned already; npm refuses an override that differs from a direct dependency's spec
  writeFileSync(join(dir, "package.json"), JSON.stringify({
    name: "revops-client-consumer",
    private: true,
    type: "module",
    devDependencies,
    overrides,
  }, null, 2));
  await npm(dir, "install", ...flags, spec);
  return dir;
}

// Packs the package (npm pack runs `prepare`, which builds dist/) into dir; returns the
// tarball's path.
export async function pack(dir) {
  const [info] = JSON.parse(await npm(pkgDir, "pack", "--json", "--pack-destination", dir));
  return join(dir, info.filename);
}

// Where "@revops/client" resolves from dir, symlinks followed.
export function installedAt(dir) {
  return realpathSync(join(dir, "node_modules", ...pkg.name.split("/")));
}

export const pinned = (name) => ({ [name]: pkg.devDependencies[name] });

// Runs the unit tests: each test/*.test.ts is bundled by esbuild (the build's own tool, so
// no second compiler to keep in step) into node_modules/.cache/web-tests, then Node's own
// test runner runs them. Types are checked separately (`npm run typecheck`).
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "node_modules", ".cache", "web-tests");
rmSync(out, { recursive: true, force: true });

const tests = readdirSync(here).filter((name) => /\.test\.tsx?$/.test(name));
await build({
  entryPoints: tests.map((name) => join(here, name)),
  bundle: true,
  platform: "node",
  format: "esm",
  target: ["node20"],
  outdir: out,
  outExtension: { ".js": ".mjs" },
  sourcemap: "inline",
  jsx: "automatic",
  jsxImportSource: "preact",
  logLevel: "warning",
});

const built = tests.map((name) => join(out, name.replace(/\.tsx?$/, ".mjs")));
const run = spawnSync(
  process.execPath,
  ["--enable-source-maps", "--test", "--test-reporter=spec", ...process.argv.slice(2), ...built],
  {
    cwd: join(here, ".."), // the bundles run elsewhere: a test finds the sources from here
    stdio: "inherit",
  },
);
process.exit(run.status ?? 1);

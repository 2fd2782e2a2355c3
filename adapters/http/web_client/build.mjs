// Builds src/ into dist/: index.html and assets/<name>-<hash>.js|css. esbuild's output is a
// function of the sources and the pinned versions only, so CI can rebuild and compare.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "assets"), { recursive: true });

const result = await build({
  entryPoints: { app: join(here, "src", "main.tsx") },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022"],
  outdir: join(dist, "assets"),
  entryNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "eof",
  metafile: true,
  logLevel: "warning",
  define: { "process.env.NODE_ENV": '"production"' },
});

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = outputs.find((name) => name.endsWith(".js"));
const style = outputs.find((name) => name.endsWith(".css"));
const template = readFileSync(join(here, "src", "index.html"), "utf8");
writeFileSync(
  join(dist, "index.html"),
  template.replace("%SCRIPT%", `assets/${script}`).replace("%STYLE%", `assets/${style}`),
);
console.log(`built ${["index.html", ...outputs.map((name) => `assets/${name}`)].join(", ")}`);

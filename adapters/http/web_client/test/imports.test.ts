// The page's modules form no import circle, and only the page itself (app.tsx, main.tsx)
// reaches into views/: the controller and the state under it know no view. Read from the
// source, type-only imports included (esbuild drops those, so the bundle cannot tell).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";

type Graph = Map<string, string[]>;

const SRC = resolve("src"); // test/run.mjs runs the tests in the package's folder
const EXTENSIONS = [".ts", ".tsx", "/index.ts", "/index.tsx"];
// `import … from "./x"`, `export … from "./x"`, `import "./x"` and `import("./x")`.
const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

function resolved(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, ...EXTENSIONS.map((ending) => base + ending)]) {
    if (/\.tsx?$/.test(candidate) && existsSync(candidate)) return candidate;
  }
  return null; // a stylesheet, or a file that is not there (tsc reports that)
}

function importGraph(root: string): Graph {
  const graph: Graph = new Map();
  for (const file of sources(root)) {
    const targets = [...readFileSync(file, "utf8").matchAll(SPECIFIER)]
      .map((match) => resolved(file, match[1]))
      .filter((target): target is string => target !== null);
    graph.set(relative(root, file), [...new Set(targets.map((target) => relative(root, target)))]);
  }
  return graph;
}

// Every circle of the graph, each as the path that closes it (a, b, …, a).
export function circles(graph: Graph): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string): void => {
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

describe("the page's imports", () => {
  const graph = importGraph(SRC);

  test("are read: the page's modules and their imports are found", () => {
    assert.ok((graph.get("app.tsx") ?? []).includes("controller.ts"));
    assert.ok((graph.get("views/session_pane.tsx") ?? []).includes("controller.ts"));
  });

  test("form no circle", () => {
    assert.deepEqual(circles(graph), []);
  });

  test("reach views/ only from the page itself", () => {
    const page = new Set(["app.tsx", "main.tsx"]);
    const intoViews = [...graph]
      .filter(([file]) => !file.startsWith("views/") && !page.has(file))
      .flatMap(([file, targets]) => targets.filter((t) => t.startsWith("views/")).map((t) => `${file} -> ${t}`));
    assert.deepEqual(intoViews, []);
  });

  test("a circle, were there one, would be found", () => {
    const looped: Graph = new Map([
      ["app.tsx", ["controller.ts", "views/pane.tsx"]],
      ["controller.ts", ["state.ts"]],
      ["views/pane.tsx", ["app.tsx"]],
      ["state.ts", []],
    ]);
    assert.deepEqual(circles(looped), [["app.tsx", "views/pane.tsx", "app.tsx"]]);
  });
});

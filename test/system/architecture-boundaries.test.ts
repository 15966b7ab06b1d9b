import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { PROJECT_ROOT } from "../helpers/paths.ts";

/**
 * docs/architecture.md's rules of who may import whom, checked on every import of src/ (static and
 * dynamic). A part is a folder of src/ (files at its top, such as config.ts, are "root").
 */
const SRC = join(PROJECT_ROOT, "src");

/** For each part, the parts it must never import. */
const FORBIDDEN: Record<string, string[]> = {
  domain: ["api", "web", "store", "blobs", "jobs", "convert", "detect", "cli", "ops", "client", "root", "uploads"],
  detect: ["api", "web", "store", "blobs", "jobs", "convert", "cli", "ops", "uploads"],
  store: ["api", "web", "jobs", "convert", "detect", "cli", "ops", "blobs", "uploads"],
  blobs: ["api", "web", "store", "jobs", "convert", "detect", "cli", "ops", "uploads"],
  convert: ["api", "web", "store", "jobs", "cli", "ops", "uploads"],
  jobs: ["api", "web", "cli", "uploads"],
  api: ["convert", "jobs", "web", "cli"],
  web: ["api", "convert", "jobs", "cli"],
  uploads: ["api", "web", "jobs", "convert", "cli", "ops", "client"],
  client: ["api", "web", "store", "blobs", "jobs", "convert", "cli", "ops", "uploads"],
};

/**
 * What the pure domain may import from outside: hashing and randomness, and ipaddr.js, a pure
 * address parser the SSRF rule (domain/address-policy.ts) is written with. No I/O.
 */
const DOMAIN_BUILTINS = new Set(["node:crypto", "ipaddr.js"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

function partOf(file: string): string {
  const rel = relative(SRC, file).split("/");
  return rel.length === 1 ? "root" : rel[0]!;
}

/** Every module specifier a file imports or re-exports, statically or with import(). */
function specifiers(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/g),
    ...text.matchAll(/(?:^|\n)\s*import\s+"([^"]+)"/g),
    ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
  ];
  return found.map((m) => m[1]!);
}

function violations(): string[] {
  const out: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = partOf(file);
    for (const spec of specifiers(file)) {
      const where = relative(PROJECT_ROOT, file);
      if (spec.startsWith(".")) {
        const to = partOf(resolve(dirname(file), spec));
        if (FORBIDDEN[from]?.includes(to)) out.push(`${where} (${from}) imports ${spec} (${to})`);
      } else if (from === "domain" && !DOMAIN_BUILTINS.has(spec)) {
        out.push(`${where} (domain) imports ${spec}: the domain uses no I/O, driver or framework`);
      }
    }
  }
  return out;
}

test("no import crosses a forbidden boundary between the parts of src/", () => {
  assert.deepEqual(violations(), []);
});

/** The packages that reach the database: only src/store/ may import them. */
const DATABASE_PACKAGES = new Set(["kysely", "pg", "better-sqlite3"]);

test("the database handle and drivers stay inside src/store/: every other part goes through the repositories", () => {
  const out: string[] = [];
  for (const file of sourceFiles(SRC)) {
    if (partOf(file) === "store") continue;
    const where = relative(PROJECT_ROOT, file);
    for (const spec of specifiers(file)) if (DATABASE_PACKAGES.has(spec)) out.push(`${where} imports ${spec}`);
    // The Store keeps `db` for tests that inspect tables; code reading it would bypass the store's outcomes.
    if (/\bstore\.db\b/.test(readFileSync(file, "utf8"))) out.push(`${where} reads the store's db handle`);
  }
  assert.deepEqual(out, []);
});

/** Imports that run at load (not `import type`): the edges a cycle of modules would be made of. */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+"(\.[^"]+)"/g)].map((m) => resolve(dirname(file), m[1]!));
}

test("no cycle of imports between the modules of src/", () => {
  const cycles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    const at = path.indexOf(file);
    if (at >= 0) return void cycles.push([...path.slice(at), file].map((f) => relative(SRC, f)).join(" -> "));
    if (done.has(file)) return;
    path.push(file);
    for (const next of runtimeImports(file)) visit(next);
    path.pop();
    done.add(file);
  };
  for (const file of sourceFiles(SRC)) visit(file);
  assert.deepEqual(cycles, []);
});

test("each role is assembled in one place: the CLI, the tests and the benchmarks start src/api-role.ts and src/worker-role.ts", () => {
  // Who may put a role together from its pieces (buildApp, startWorker): the role modules, and a
  // benchmark that measures the pieces themselves against the role (bench/api.ts's unlogged and bare sides).
  const assemblers = new Map([
    [/import \{[^}]*\bbuildApp\b[^}]*\} from "[^"]*\/app\.ts"/, new Set(["src/api-role.ts", "bench/api.ts"])],
    [/import \{[^}]*\bstartWorker\b[^}]*\} from "[^"]*\/jobs\/worker\.ts"/, new Set(["src/worker-role.ts"])],
  ]);
  const files = [...sourceFiles(SRC), ...sourceFiles(join(PROJECT_ROOT, "test/helpers")), ...sourceFiles(join(PROJECT_ROOT, "bench"))];
  const found: string[] = [];
  for (const file of files) {
    const rel = relative(PROJECT_ROOT, file);
    const text = readFileSync(file, "utf8");
    for (const [imports, allowed] of assemblers) if (imports.test(text) && !allowed.has(rel)) found.push(`${rel}: ${imports.source}`);
  }
  assert.deepEqual(found, []);
  for (const [file, role] of [
    ["src/cli/serve-command.ts", "startApiRole("],
    ["src/cli/worker-command.ts", "startWorkerRole("],
    ["test/helpers/test-server.ts", "startApiRole("],
    ["test/helpers/test-worker.ts", "startWorkerRole("],
  ] as const) {
    assert.ok(readFileSync(join(PROJECT_ROOT, file), "utf8").includes(role), `${file} starts its role through ${role}`);
  }
});

test("the boundary check sees the imports it must see", () => {
  // The check itself is checked: a few imports known to exist are found and resolved to their part.
  const convertDocument = specifiers(join(SRC, "jobs", "convert-document.ts"));
  assert.ok(convertDocument.includes("../domain/formats.ts"));
  const main = specifiers(join(SRC, "cli", "main.ts"));
  assert.ok(main.some((s) => s.endsWith("serve-command.ts")), "dynamic import() is read");
  assert.equal(partOf(join(SRC, "config.ts")), "root");
  assert.equal(partOf(join(SRC, "api", "actions", "folder-add.ts")), "api");
  assert.ok(specifiers(join(SRC, "store", "documents.ts")).includes("kysely"), "package imports are read");
  assert.ok(runtimeImports(join(SRC, "store", "documents.ts")).includes(join(SRC, "store", "bookmarks.ts")), "runtime imports are resolved");
});

import assert from "node:assert/strict";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { test } from "node:test";
import { checkArchitecture, readPartsTable, type PartRule } from "../../scripts/architecture.ts";
import { PROJECT_ROOT } from "../helpers/paths.ts";

/**
 * docs/architecture.md's parts table, enforced by dependency-cruiser (scripts/architecture.ts):
 * who may import whom, the domain's packages, the database drivers inside src/store/, no import
 * circle, what each role's process loads, and no import a checker cannot follow. The check is
 * itself checked: violations planted in a copy of src/, one per import form and one per part,
 * must each be reported.
 */
const TABLE = readPartsTable(readFileSync(join(PROJECT_ROOT, "docs/architecture.md"), "utf8"));

test("src/ keeps every rule of docs/architecture.md's parts table", async () => {
  assert.deepEqual(await checkArchitecture(PROJECT_ROOT), []);
});

test("the parts table covers every folder and root file of src/, and a row naming no part is refused", () => {
  const parts = new Set(TABLE.map((r) => r.part));
  for (const name of readdirSync(join(PROJECT_ROOT, "src"))) assert.ok(parts.has(name), `src/${name} has a row`);
  for (const part of ["domain", "detect", "store", "blobs", "uploads", "api", "web", "jobs", "convert", "ops", "cli", "client"]) assert.ok(parts.has(part));
  const table = "| folder | holds | may import |\n|---|---|---|\n| `src/a/` | x | `domian` |\n";
  assert.throws(() => readPartsTable(table), /may import domian, which has no row/);
  assert.throws(() => readPartsTable(table.replace("`domian`", "domain")), /must be `part`/);
});

/** The ways one module names another; each planted once at least. */
const FORMS: Array<(spec: string) => string> = [
  (s) => `import { x as planted } from "${s}";\nexport const p = planted;\n`,
  (s) => `import * as planted from '${s}';\nexport const p = planted;\n`,
  (s) => `export * from "${s}";\n`,
  (s) => `import type * as Planted from "${s}";\nexport type P = typeof Planted;\n`,
  (s) => `import "${s}";\n`,
  (s) => `export const p = () => import("${s}");\n`,
  (s) => `export const p = () => import(\`${s}\`);\n`,
  (s) => `export const p = async () => (await import('${s}')).x;\n`,
];

/** A module of `part` to import: the root file itself, or the first file of the folder. */
function moduleOf(root: string, part: string): string {
  if (part.endsWith(".ts")) return join(root, "src", part);
  const file = readdirSync(join(root, "src", part)).filter((f) => f.endsWith(".ts")).sort()[0]!;
  return join(root, "src", part, file);
}

function specifier(fromFile: string, toFile: string): string {
  const rel = relative(join(fromFile, ".."), toFile);
  return rel.startsWith(".") ? rel : `./${rel}`;
}

/** A part it must not import: the first of the table it does not list. */
function forbiddenFor(rule: PartRule): string {
  return TABLE.map((r) => r.part).find((p) => p !== rule.part && !rule.mayImport.includes(p))!;
}

test("a violation planted in a copy of src/ fails the check: one per part, every import form, each other rule", async () => {
  const root = mkdtempSync(join(tmpdir(), "quire-architecture-"));
  try {
    cpSync(join(PROJECT_ROOT, "src"), join(root, "src"), { recursive: true });
    cpSync(join(PROJECT_ROOT, "docs/architecture.md"), join(root, "docs/architecture.md"));
    symlinkSync(join(PROJECT_ROOT, "node_modules"), join(root, "node_modules"));
    const expected: Array<{ what: string; line: RegExp }> = [];
    const plant = (rel: string, text: string, line: RegExp, what: string) => {
      const file = join(root, rel);
      if (existsSync(file)) appendFileSync(file, `\n${text}`);
      else writeFileSync(file, text);
      expected.push({ what, line });
    };
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

    // One forbidden import from every part, the forms taken in turn so each is planted.
    TABLE.forEach((rule, i) => {
      const target = forbiddenFor(rule);
      // The threads' boot file (src/thread-boot.mjs) is JavaScript the checker does not parse; it is
      // one of the named opaque-import exceptions (scripts/architecture.ts), so nothing is planted there.
      if (rule.part.endsWith(".mjs")) return;
      const file = rule.part.endsWith(".ts") ? `src/${rule.part}` : `src/${rule.part}/planted-edge.ts`;
      const toFile = moduleOf(root, target);
      const form = FORMS[i % FORMS.length]!;
      plant(file, form(specifier(join(root, file), toFile)), new RegExp(`^${esc(file)} -> ${esc(relative(root, toFile))} breaks "${esc(rule.part)} may import only`), `${rule.part} imports ${target} (form ${i % FORMS.length})`);
    });
    assert.ok(TABLE.length >= FORMS.length, "every form is planted at least once");

    plant("src/domain/planted-io.ts", `import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n`, /^src\/domain\/planted-io\.ts -> fs breaks "domain imports no package/, "the domain does I/O");
    plant("src/web/planted-driver.ts", `import { sql } from "kysely";\nexport const s = sql;\n`, /^src\/web\/planted-driver\.ts -> .*node_modules\/kysely\/.* breaks "only src\/store\/ reaches the database drivers"/, "the web part imports the driver");
    plant("src/detect/planted-a.ts", `import { b } from "./planted-b.ts";\nexport const a = () => b;\n`, /breaks "no import circle"/, "an import circle");
    plant("src/detect/planted-b.ts", `import { a } from "./planted-a.ts";\nexport const b = () => a;\n`, /breaks "no import circle"/, "an import circle (its other end)");
    plant("src/convert/planted-typo.ts", `export { x } from "./no-such-module.ts";\n`, /^src\/convert\/planted-typo\.ts -> .*no-such-module\.ts breaks "every import resolves"/, "an import that resolves to nothing");
    plant("src/uploads/planted-computed.ts", `const name = "api";\nexport const p = () => import(\`../\${name}/api-routes.ts\`);\n`, /^src\/uploads\/planted-computed\.ts:2: import\(\) of a computed address/, "a computed import()");
    plant("src/jobs/planted-require.ts", `import { createRequire } from "node:module";\nexport const r = createRequire(import.meta.url)("../web/html.ts");\n`, /^src\/jobs\/planted-require\.ts:2: createRequire\(\)/, "require through createRequire");
    plant("src/api/planted-db.ts", `export const rows = (store: { db: unknown }) => store.db;\n`, /^src\/api\/planted-db\.ts reads the store's db handle/, "the store's handle read outside it");
    plant("src/web/planted-handle.ts", `import { databaseOf } from "../store/store-handle.ts";\nexport const h = databaseOf;\n`, /^src\/web\/planted-handle\.ts -> src\/store\/store-handle\.ts breaks "only src\/store\/ reaches the store's handle"/, "the store's handle module imported outside it");
    // Reachability through edges each allowed on its own: worker-role → ops → Fastify; api-role → ops → convert.
    plant("src/ops/job-metrics.ts", `import "fastify";\n`, /^src\/worker-role\.ts -> .*node_modules\/fastify\/.* breaks "the worker role never loads the HTTP side.*via src\/ops\/job-metrics\.ts/, "the worker reaches Fastify");
    plant("src/ops/access-log.ts", `import "../convert/sandbox.ts";\n`, /^src\/api-role\.ts -> src\/convert\/sandbox\.ts breaks "the API role never loads a converter.*via .*src\/ops\/access-log\.ts/, "the API role reaches a converter");
    mkdirSync(join(root, "src/newpart"));
    writeFileSync(join(root, "src/newpart/x.ts"), "export const x = 1;\n");
    expected.push({ what: "a part with no row", line: /^src\/newpart has no row in docs\/architecture\.md's parts table$/ });

    const found = await checkArchitecture(root);
    const missed = expected.filter((e) => !found.some((l) => e.line.test(l))).map((e) => e.what);
    assert.deepEqual(missed, [], `not reported:\n${missed.join("\n")}\nreported:\n${found.join("\n")}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("each role is assembled in one place: the CLI, the tests and the benchmarks start src/api-role.ts and src/worker-role.ts", () => {
  // Who may put a role together from its pieces (buildApp, startWorker): the role modules, and a
  // benchmark that measures the pieces themselves against the role (bench/api.ts's unlogged and bare sides).
  const assemblers = new Map([
    [/import \{[^}]*\bbuildApp\b[^}]*\} from "[^"]*\/app\.ts"/, new Set(["src/api-role.ts", "bench/api.ts"])],
    [/import \{[^}]*\bstartWorker\b[^}]*\} from "[^"]*\/jobs\/worker\.ts"/, new Set(["src/worker-role.ts"])],
  ]);
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
  const all = [...files(join(PROJECT_ROOT, "src")), ...files(join(PROJECT_ROOT, "test/helpers")), ...files(join(PROJECT_ROOT, "bench"))];
  const found: string[] = [];
  for (const file of all) {
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

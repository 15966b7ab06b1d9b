/**
 * The house's boundaries, checked by dependency-cruiser with rules made from ONE table: the parts
 * table of docs/architecture.md (folder or root file | holds | may import). Nothing else lists who
 * may import whom, so the page and the check cannot drift apart. `npm run check:architecture`
 * runs it; test/system/architecture-boundaries.test.ts runs it on src/ and on copies with planted
 * violations; `npm run graph` draws the parts' graph (docs/architecture-graph.svg) from the same code.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type ICruiseOptions, type IForbiddenRuleType, type IViolation } from "dependency-cruiser";
import ts from "typescript";

export const PROJECT_ROOT = fileURLToPath(new URL("../", import.meta.url));

/** One row of the table: a part (`domain`, or a root file such as `config.ts`) and what it may import. */
export interface PartRule {
  part: string;
  mayImport: string[];
  /** Packages and Node built-ins it may import, when the row limits them (`(packages: …)`); else any. */
  packages?: string[];
}

/** Reads the parts table out of docs/architecture.md; throws on a row it cannot read (a typo fails, never passes). */
export function readPartsTable(markdown: string): PartRule[] {
  const head = markdown.indexOf("| folder | holds | may import |");
  if (head < 0) throw new Error("docs/architecture.md has no parts table (| folder | holds | may import |)");
  const lines = markdown.slice(head).split("\n");
  const rows: PartRule[] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith("|")) break;
    const cells = line.split(" | ");
    const name = /^\| `src\/([^/`]+)\/?`$/.exec(cells[0]!)?.[1];
    const allowed = cells.at(-1)!.replace(/ \|$/, "");
    if (!name) throw new Error(`parts table: cannot read the part of: ${line}`);
    const packages = /\(packages: ([^)]*)\)/.exec(allowed)?.[1];
    const plain = allowed.replace(/\([^)]*\)/g, "").trim();
    const mayImport = plain === "nothing" ? [] : [...plain.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    if (plain !== "nothing" && plain.replace(/`[^`]+`/g, "").replace(/[,\s]/g, "") !== "") throw new Error(`parts table: "may import" of ${name} must be \`part\`, … or nothing: ${allowed}`);
    rows.push({ part: name, mayImport, ...(packages ? { packages: [...packages.matchAll(/`([^`]+)`/g)].map((m) => m[1]!) } : {}) });
  }
  const known = new Set(rows.map((r) => r.part));
  for (const r of rows) for (const p of r.mayImport) if (!known.has(p)) throw new Error(`parts table: ${r.part} may import ${p}, which has no row`);
  return rows;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The path pattern of a part: a folder of src/ or one of its root files. */
const partPath = (part: string) => (part.endsWith(".ts") ? `^src/${escape(part)}$` : `^src/${escape(part)}/`);

/** Packages that reach the database: only src/store/ may import them. */
const DATABASE_PACKAGES = "(^|/)node_modules/(kysely|pg|pg-[a-z-]+|better-sqlite3)/";
const FRAMEWORK = "(^|/)node_modules/(fastify|@fastify/[^/]+)/";

/** The rules on direct edges (every import, type-only ones included) and on cycles. */
export function edgeRules(table: readonly PartRule[]): IForbiddenRuleType[] {
  const rules: IForbiddenRuleType[] = table.map((r) => ({
    name: `${r.part} may import only ${r.mayImport.join(", ") || "itself"}`,
    severity: "error",
    from: { path: partPath(r.part) },
    to: { path: "^src/", pathNot: [partPath(r.part), ...r.mayImport.map(partPath)] },
  }));
  for (const r of table.filter((t) => t.packages)) {
    rules.push({
      name: `${r.part} imports no package but ${r.packages!.join(", ")}`,
      severity: "error",
      from: { path: partPath(r.part) },
      to: { pathNot: ["^src/", ...r.packages!.map((p) => (p.startsWith("node:") ? `^${escape(p.slice(5))}$` : `(^|/)node_modules/${escape(p)}/`))] },
    });
  }
  rules.push(
    { name: "only src/store/ reaches the database drivers", severity: "error", from: { path: "^src/", pathNot: "^src/store/" }, to: { path: DATABASE_PACKAGES } },
    // The store's handle is for the store and for tests (test/helpers/store-db.ts), never the app.
    { name: "only src/store/ reaches the store's handle", severity: "error", from: { path: "^src/", pathNot: "^src/store/" }, to: { path: "^src/store/store-handle\\.ts$" } },
    { name: "every import resolves", severity: "error", from: { path: "^src/" }, to: { couldNotResolve: true } },
    { name: "no import circle", severity: "error", from: { path: "^src/" }, to: { circular: true } },
  );
  return rules;
}

/** What each role's process must never load: checked on runtime imports only (type-only ones vanish when compiled). */
export const ROLE_RULES: IForbiddenRuleType[] = [
  {
    name: "the worker role never loads the HTTP side (src/api/, src/web/, the app, Fastify)",
    severity: "error",
    from: { path: "^src/worker-role\\.ts$" },
    to: { path: ["^src/(api|web)/", "^src/(app|api-role)\\.ts$", FRAMEWORK], reachable: true },
  },
  {
    name: "the API role never loads a converter or the job worker",
    severity: "error",
    from: { path: "^src/api-role\\.ts$" },
    to: { path: ["^src/(convert|jobs)/", "^src/worker-role\\.ts$"], reachable: true },
  },
];

/**
 * Files allowed an import the checker cannot follow (a computed `import()`, `require`): each with
 * its reason. Anywhere else such an import fails the check, since no rule could see where it goes.
 */
const OPAQUE_IMPORTS: Record<string, string> = {
  "src/thread-boot.mjs": "the worker threads' boot file: it imports the entry its creator (page-text.ts, reader-render-pool.ts, sqlite-search-pool.ts) names",
  "src/web/web-assets.ts": "createRequire only finds the file of a browser asset from npm (uPlot) to serve it; nothing is imported",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.(ts|mts|mjs|js|cjs)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Imports no static checker can follow: `import(expr)` with a computed address, `require(…)`, `createRequire`. */
export function opaqueImports(root: string): string[] {
  const out: string[] = [];
  for (const file of sourceFiles(join(root, "src"))) {
    const rel = relative(root, file);
    if (rel in OPAQUE_IMPORTS) continue;
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const arg = node.arguments[0];
        const literal = arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg));
        const where = `${rel}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
        if (node.expression.kind === ts.SyntaxKind.ImportKeyword && !literal) out.push(`${where}: import() of a computed address`);
        if (ts.isIdentifier(node.expression) && ["require", "createRequire"].includes(node.expression.text)) out.push(`${where}: ${node.expression.text}()`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

const describe = (v: IViolation) => {
  const path = v.cycle ? `: ${v.cycle.map((c) => c.name).join(" -> ")}` : v.via ? `: via ${v.via.map((c) => c.name).join(" -> ")}` : "";
  return `${v.from} -> ${v.to} breaks "${v.rule.name}"${path}`;
};

/** Every part of src/ must have its row: a new folder or root file is placed in the table before it can pass. */
function unplaced(root: string, table: readonly PartRule[]): string[] {
  const parts = new Set(table.map((r) => r.part));
  return readdirSync(join(root, "src"))
    .filter((name) => !parts.has(name))
    .map((name) => `src/${name} has no row in docs/architecture.md's parts table`);
}

/**
 * Every way src/ under `root` breaks the house's rules (empty when it keeps them): the table's edges,
 * the domain's packages, the database drivers, cycles, unresolved and opaque imports, what each
 * role loads, and code outside the store reading its handle.
 */
export async function checkArchitecture(root: string = PROJECT_ROOT): Promise<string[]> {
  const table = readPartsTable(readFileSync(join(root, "docs/architecture.md"), "utf8"));
  const common: ICruiseOptions = { baseDir: root, validate: true, doNotFollow: { path: "node_modules" }, moduleSystems: ["es6", "cjs"], enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "node", "default"] } };
  const edges = await cruise(["src"], { ...common, tsPreCompilationDeps: true, ruleSet: { forbidden: edgeRules(table) } });
  const roles = await cruise(["src/api-role.ts", "src/worker-role.ts"], { ...common, tsPreCompilationDeps: false, ruleSet: { forbidden: ROLE_RULES } });
  const found = [edges, roles].flatMap((r) => (typeof r.output === "string" ? [r.output] : r.output.summary.violations.map(describe)));
  const storeHandle = sourceFiles(join(root, "src"))
    .filter((f) => !relative(root, f).startsWith("src/store/") && /\bstore\.db\b/.test(readFileSync(f, "utf8")))
    .map((f) => `${relative(root, f)} reads the store's db handle (only src/store/ may)`);
  return [...unplaced(root, table), ...found, ...opaqueImports(root), ...storeHandle];
}

/** The parts' graph in Graphviz's language: one node per part (folder or root file), runtime and type edges. */
export async function partsGraphDot(root: string = PROJECT_ROOT): Promise<string> {
  const result = await cruise(["src"], {
    baseDir: root,
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    includeOnly: "^src/",
    collapse: "^src/[^/]+",
    outputType: "dot",
  });
  return String(result.output);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === "--dot") process.stdout.write(await partsGraphDot());
  else {
    const found = await checkArchitecture();
    for (const line of found) console.error(line);
    console.log(found.length ? `${found.length} architecture violations` : "architecture: every import keeps docs/architecture.md's table");
    process.exitCode = found.length ? 1 : 0;
  }
}

// Compiles the TypeScript of src/, test/, scripts/ and bench/ into plain JavaScript under
// .tmp/test-js/ (same layout), once per run, so that test files start without a loader: through
// tsx every test process paid its module hooks on each import (~0.65 s of CPU for a file that
// starts a server, ~90 s over the suite). Each module keeps the behaviour it has from source:
// - `import.meta.url` is the source file's address, so files found next to a module (fixtures,
//   web assets, worker thread entries) are found where they are;
// - a relative import of a .ts file points at its compiled twin; any other relative import (.mjs,
//   .json) at the source file itself; packages and node: modules are left as written.
// Only files whose source changed since the last compile are compiled again.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";

// The esbuild tsx runs on (tsx is a dependency; esbuild is its own): the same compiler as tsx.
const fromTsx = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"));
const { build } = await import(pathToFileURL(fromTsx.resolve("esbuild")).href);

export const OUT = ".tmp/test-js";
const DIRS = ["src", "test", "scripts", "bench"];

/** The compiled twin of a source .ts file (absolute paths). */
export const twinOf = (root, file) => join(root, OUT, relative(root, file)).replace(/\.ts$/, ".js");

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

function external(root, file) {
  return {
    name: "every-import-external",
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === "entry-point") return undefined;
        if (!args.path.startsWith("./") && !args.path.startsWith("../")) return { path: args.path, external: true };
        const target = resolve(args.resolveDir, args.path);
        if (!target.endsWith(".ts")) return { path: pathToFileURL(target).href, external: true };
        let rel = relative(dirname(twinOf(root, file)), twinOf(root, target)).split(sep).join("/");
        if (!rel.startsWith(".")) rel = `./${rel}`;
        return { path: rel, external: true };
      });
    },
  };
}

/** Compiles what changed; answers how many files were compiled and how many there are. */
export async function compileForTests(root) {
  const files = DIRS.flatMap((d) => walk(join(root, d), []));
  const stale = files.filter((f) => {
    try {
      return statSync(twinOf(root, f)).mtimeMs < statSync(f).mtimeMs;
    } catch {
      return true;
    }
  });
  const tsconfigRaw = readFileSync(join(root, "tsconfig.json"), "utf8");
  await Promise.all(
    stale.map(async (f) => {
      const out = twinOf(root, f);
      mkdirSync(dirname(out), { recursive: true });
      const result = await build({
        entryPoints: [f],
        bundle: true,
        write: false,
        format: "esm",
        platform: "node",
        target: "node20",
        tsconfigRaw,
        define: { "import.meta.url": JSON.stringify(pathToFileURL(f).href) },
        plugins: [external(root, f)],
        logLevel: "silent",
        outfile: out,
      });
      writeFileSync(out, result.outputFiles[0].contents);
    }),
  );
  return { compiled: stale.length, files: files.length };
}

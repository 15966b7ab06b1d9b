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
/** What the twins are compiled as; changed, every twin is compiled again (2: packages in VENDORED from their bundles). */
const SCHEME = 2;
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

/**
 * Packages loaded from one file each (vendor bundles, `.tmp/test-js/vendor/`): Node 20 loads an
 * ES module graph at about a millisecond of processor time a file, and these three were half of
 * the thousand files a test server loads (Kysely alone 264). Every process of a test file loads
 * them; bundled, a test server's imports cost about 0.3 s less. Pure JavaScript, no files of their
 * own read at run time; imported by their bare names only (a subpath stays the package's).
 */
const VENDORED = ["kysely", "xmlbuilder2", "prom-client"];
const VENDOR_DIR = "vendor";

/** Bundles each vendored package into one ES module, again when its installed version changes. */
async function buildVendor(root) {
  const dir = join(root, OUT, VENDOR_DIR);
  mkdirSync(dir, { recursive: true });
  const require = createRequire(join(root, "package.json"));
  for (const name of VENDORED) {
    const manifest = JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8"));
    const version = manifest.version;
    const out = join(dir, `${name}.js`);
    const stamp = `// ${name}@${version}\n`;
    try {
      if (readFileSync(out, "utf8").startsWith(stamp)) continue;
    } catch {
      // not built yet
    }
    // An ES module package is re-exported whole; a CommonJS one by its default and the names it has.
    const esm = manifest.exports?.["."]?.import !== undefined;
    const names = esm ? [] : Object.keys(require(name)).filter((k) => /^[A-Za-z_$][\w$]*$/.test(k) && k !== "default");
    const contents = esm
      ? `export * from ${JSON.stringify(name)};`
      // required, not imported: Node's default export of CommonJS is module.exports, __esModule or not
      : `const m = require(${JSON.stringify(name)});\nexport default m;\nexport const { ${names.join(", ")} } = m;`;
    const result = await build({
      stdin: { contents, resolveDir: root, loader: "js" },
      bundle: true,
      write: false,
      format: "esm",
      platform: "node",
      target: "node20",
      // A CommonJS package's own require() of node: modules, inside an ES module.
      banner: { js: `${stamp}import { createRequire as __vendorRequire } from "node:module";\nconst require = __vendorRequire(import.meta.url);` },
      logLevel: "silent",
    });
    writeFileSync(out, result.outputFiles[0].contents);
  }
}

function external(root, file) {
  return {
    name: "every-import-external",
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === "entry-point") return undefined;
        // From this file's twin to another compiled file, as a relative import.
        const fromTwin = (to) => {
          const rel = relative(dirname(twinOf(root, file)), to).split(sep).join("/");
          return { path: rel.startsWith(".") ? rel : `./${rel}`, external: true };
        };
        if (VENDORED.includes(args.path)) return fromTwin(join(root, OUT, VENDOR_DIR, `${args.path}.js`));
        if (!args.path.startsWith("./") && !args.path.startsWith("../")) return { path: args.path, external: true };
        const target = resolve(args.resolveDir, args.path);
        if (!target.endsWith(".ts")) return { path: pathToFileURL(target).href, external: true };
        return fromTwin(twinOf(root, target));
      });
    },
  };
}

/** Compiles what changed; answers how many files were compiled and how many there are. */
export async function compileForTests(root) {
  const files = DIRS.flatMap((d) => walk(join(root, d), []));
  await buildVendor(root);
  // Twins compiled by another version of this script are compiled again, whatever their age.
  const schemeFile = join(root, OUT, "scheme");
  const scheme = `${SCHEME}\n`;
  let sameScheme = false;
  try {
    sameScheme = readFileSync(schemeFile, "utf8") === scheme;
  } catch {
    // first compile
  }
  const stale = files.filter((f) => {
    try {
      return !sameScheme || statSync(twinOf(root, f)).mtimeMs < statSync(f).mtimeMs;
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
  writeFileSync(schemeFile, scheme);
  return { compiled: stale.length, files: files.length };
}

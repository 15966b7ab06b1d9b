import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { PROJECT_ROOT } from "./helpers/paths.ts";

/**
 * docs/architecture.md's rules of who may import whom, checked on every import of src/ (static and
 * dynamic). A part is a folder of src/ (files at its top, such as config.ts, are "root").
 */
const SRC = join(PROJECT_ROOT, "src");

/** For each part, the parts it must never import. */
const FORBIDDEN: Record<string, string[]> = {
  domain: ["api", "web", "store", "blobs", "jobs", "convert", "detect", "cli", "ops", "client", "root"],
  detect: ["api", "web", "store", "blobs", "jobs", "convert", "cli", "ops"],
  store: ["api", "web", "jobs", "convert", "detect", "cli", "ops", "blobs"],
  blobs: ["api", "web", "store", "jobs", "convert", "detect", "cli", "ops"],
  convert: ["api", "web", "store", "jobs", "cli", "ops"],
  jobs: ["api", "web", "cli"],
  api: ["convert", "jobs", "web", "cli"],
  web: ["api", "convert", "jobs", "cli"],
  client: ["api", "web", "store", "blobs", "jobs", "convert", "cli", "ops"],
};

/** Node built-ins the pure domain may use: hashing and randomness, no I/O. */
const DOMAIN_BUILTINS = new Set(["node:crypto"]);

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

test("the boundary check sees the imports it must see", () => {
  // The check itself is checked: a few imports known to exist are found and resolved to their part.
  const convertDocument = specifiers(join(SRC, "jobs", "convert-document.ts"));
  assert.ok(convertDocument.includes("../domain/formats.ts"));
  const main = specifiers(join(SRC, "cli", "main.ts"));
  assert.ok(main.some((s) => s.endsWith("serve-command.ts")), "dynamic import() is read");
  assert.equal(partOf(join(SRC, "config.ts")), "root");
  assert.equal(partOf(join(SRC, "api", "actions", "folder-add.ts")), "api");
});

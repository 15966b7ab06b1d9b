// Whether dist/ holds the build of the sources beside it: its entry is newer than every file under
// src/ (or there is no src/, as in the image). `quire` runs dist/ only then, and the build's test
// runs the dist/ that `npm ci` built rather than building again.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function newestMtime(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** The compiled entry's path, and whether it is the build of the sources under `root`. */
export function compiledEntry(root) {
  const entry = join(root, "dist", "cli", "main.js");
  const sources = join(root, "src");
  const fresh = existsSync(entry) && (!existsSync(sources) || newestMtime(sources) <= statSync(entry).mtimeMs);
  return { entry, fresh };
}

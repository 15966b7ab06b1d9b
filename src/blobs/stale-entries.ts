import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";

/**
 * Removes the entries of `dir` (files, or whole folders) last written before `before` (epoch ms)
 * and whose names `match` accepts; answers how many went. A missing `dir`, or an entry removed by
 * someone else meanwhile, is not an error: crashed processes' leftovers are cleaned by several.
 */
export async function removeStaleEntries(dir: string, before: number, match: (name: string) => boolean = () => true): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
  let removed = 0;
  for (const name of names.filter(match)) {
    const path = join(dir, name);
    try {
      if ((await stat(path)).mtimeMs >= before) continue;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw err;
    }
    await rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}

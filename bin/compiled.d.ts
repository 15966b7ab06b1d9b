/** The compiled entry's path, and whether it is the build of the sources under `root` (compiled.js). */
export function compiledEntry(root: string): { entry: string; fresh: boolean };

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectFile, type Detection } from "../../src/detect/detect-format.ts";

/** What a detection case expects: a type alone means "not encrypted"; null means "not a supported format". */
export type Expected = string | null | Detection;

export function expectation(want: Expected): Detection | null {
  return typeof want === "string" ? { type: want as Detection["type"], encrypted: false } : want;
}

export async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "quire-detect-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes each case to a file and checks its detection (the case's name is passed as the upload's file name). */
export async function expectCases(cases: ReadonlyArray<readonly [string, Buffer, Expected]>): Promise<void> {
  await withTempDir(async (dir) => {
    for (const [name, bytes, want] of cases) {
      await writeFile(join(dir, name), bytes);
      assert.deepEqual(await detectFile(join(dir, name), { fileName: name }), expectation(want), name);
    }
  });
}

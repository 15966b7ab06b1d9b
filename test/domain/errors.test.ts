import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { ERROR_MESSAGES } from "../../src/domain/errors.ts";
import { FIXTURES } from "../helpers/paths.ts";

/** Ties the catalogue to the spec's own tables, so a typo in a message cannot pass. */
test("every error message is exactly the one in the spec tables", async () => {
  const spec = join(FIXTURES, "..", "spec");
  const text = (await readFile(join(spec, "000_8a350328e8f3aa3b.txt"), "utf8")) + (await readFile(join(spec, "decisions.md"), "utf8"));
  const fromSpec = new Map<string, string>();
  for (const m of text.matchAll(/^\| (\d{3}) \| ([^|]+?) \|/gm)) fromSpec.set(m[1]!, m[2]!);
  for (const [code, message] of Object.entries(ERROR_MESSAGES)) {
    assert.equal(message, fromSpec.get(code), `message of ${code}`);
  }
  assert.deepEqual([...fromSpec.keys()].sort(), Object.keys(ERROR_MESSAGES).sort(), "no spec code is missing");
});

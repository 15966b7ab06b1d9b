import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { installedOfficeVersion } from "../../src/convert/office-profile.ts";
import { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import { FIXTURES } from "../helpers/paths.ts";
import { DEFAULT_SANDBOX } from "../../src/convert/sandbox.ts";

/**
 * Issue 11 item 8: one LibreOffice slot that fails to start (seen once under load on a fresh
 * machine) must not stop the converter: it is retried with backoff while the others serve.
 * The failure is forced by putting a file where the slot's profile folder has to be.
 */

const SLOW = { timeout: 180_000 };
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "quire-slot-start-"));
});
after(() => rm(dir, { recursive: true, force: true }));

test("a slot that cannot start is retried and left broken; the converter serves with the others", SLOW, async () => {
  const workDir = join(dir, "some");
  await mkdir(join(workDir, "profiles"), { recursive: true });
  await writeFile(join(workDir, "profiles", "slot-1"), "not a folder");
  const converter = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, workDir, slots: 2, timeoutMs: 60_000 });
  await converter.start();
  try {
    const [good, bad] = converter.slotInfo();
    assert.equal(good?.state, "idle");
    assert.equal(bad?.state, "broken");
    assert.match(bad?.error ?? "", /ENOTDIR|not a directory/i);
    const out = join(dir, "out.pdf");
    await converter.convert(join(FIXTURES, "word97-2pages-tika.doc"), out);
    assert.match(execFileSync("pdfinfo", [out], { encoding: "utf8" }), /^Pages:\s+2$/m);
  } finally {
    await converter.close();
  }
});

test("a converter none of whose slots can start refuses to start, saying why", SLOW, async () => {
  const workDir = join(dir, "none");
  await mkdir(join(workDir, "profiles"), { recursive: true });
  await writeFile(join(workDir, "profiles", "slot-0"), "not a folder");
  const converter = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, workDir, slots: 1, timeoutMs: 60_000 });
  await assert.rejects(converter.start(), /LibreOffice could not be started: .*(ENOTDIR|not a directory)/i);
});

test("a slot starts without LibreOffice's graphics render tests: its profile records the installed version", SLOW, async () => {
  // Without the version, soffice takes every start for the first after an upgrade and spends
  // seconds of CPU drawing test bitmaps, writing GraphicsRenderTests.log into the profile.
  const version = installedOfficeVersion();
  assert.match(version ?? "", /^\d+\.\d+$/, "the installation's registry names its version");
  assert.match(execFileSync("/usr/bin/soffice", ["--version"], { encoding: "utf8" }), new RegExp(`^LibreOffice ${version!.replace(".", "\\.")}\\.`));
  const workDir = join(dir, "seeded");
  const converter = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, workDir, slots: 1, timeoutMs: 60_000 });
  await converter.start();
  try {
    await converter.convert(join(FIXTURES, "word97-2pages-tika.doc"), join(dir, "seeded.pdf"));
    const user = join(workDir, "profiles", "slot-0", "user");
    assert.equal(existsSync(join(user, "GraphicsRenderTests.log")), false, "no render tests ran");
    assert.match(readFileSync(join(user, "registrymodifications.xcu"), "utf8"), new RegExp(`"ooSetupLastVersion" oor:op="fuse"><value>${version}</value>`));
  } finally {
    await converter.close();
  }
});

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { processGroupMembers, SOFFICE } from "../../src/convert/office-slot.ts";
import { prepareProfile } from "../../src/convert/office-profile.ts";
import { OfficeConverter } from "../../src/convert/office-to-pdf.ts";
import { DEFAULT_SANDBOX } from "../../src/convert/sandbox.ts";

const SLOW = { timeout: 120_000 };

/**
 * Document events the macro is bound to. All three fire when LibreOffice 7.4.7 opens the
 * document with macros allowed (see the control); each writes its own marker file.
 * (dom:load is "Open Document"; office:load-finished is imported too but did not fire in a
 * headless open, so it would prove nothing here.)
 */
const EVENTS = ["dom:load", "office:view-created", "office:layout-finished"] as const;

const markerName = (event: string): string => `ran-${event.replace(":", "_")}`;

function xmlEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/**
 * A flat ODF text document (.fodt) that embeds a Basic library "Standard" with one Sub per
 * event in EVENTS, each bound to its event through <office:event-listeners>. LibreOffice 7.4
 * imports <ooo:libraries> inside <office:script script:language="ooo:Basic"> from a flat file:
 * re-saving it as .odt yields Basic/Standard/Module1.xml and the listeners in content.xml.
 */
function macroFodt(markerDir: string): string {
  const subs = EVENTS.map((event, i) => {
    const path = join(markerDir, markerName(event)).replace(/"/g, '""'); // Basic string literal
    return [
      `Sub OnEvent${i}`,
      "  Dim n As Integer",
      "  n = FreeFile",
      `  Open "${path}" For Output As #n`,
      `  Print #n, "${event}"`,
      "  Close #n",
      "End Sub",
    ].join("\n");
  }).join("\n\n");
  const listeners = EVENTS.map(
    (event, i) =>
      `<script:event-listener script:language="ooo:script" script:event-name="${event}" ` +
      `xlink:href="vnd.sun.star.script:Standard.Module1.OnEvent${i}?language=Basic&amp;location=document" xlink:type="simple"/>`,
  ).join("\n   ");
  return `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0"
  xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:ooo="http://openoffice.org/2004/office" xmlns:dom="http://www.w3.org/2001/xml-events"
  office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:scripts>
  <office:script script:language="ooo:Basic">
   <ooo:libraries>
    <ooo:library-embedded ooo:name="Standard">
     <ooo:module ooo:name="Module1">
      <ooo:source-code>${xmlEscape(subs)}
</ooo:source-code>
     </ooo:module>
    </ooo:library-embedded>
   </ooo:libraries>
  </office:script>
  <office:event-listeners>
   ${listeners}
  </office:event-listeners>
 </office:scripts>
 <office:body><office:text><text:p>A document with a Basic macro bound to its load event.</text:p></office:text></office:body>
</office:document>
`;
}

/** A temp dir holding the document and an (empty) directory its macros would write into. */
async function withMacroDocument(fn: (doc: string, markerDir: string, dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "quire-office-macro-"));
  try {
    const markerDir = join(dir, "markers");
    await mkdir(markerDir);
    const doc = join(dir, "macro.fodt");
    await writeFile(doc, macroFodt(markerDir));
    await fn(doc, markerDir, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A fresh profile that lets every document macro run without asking (the control's). */
async function permissiveProfile(dir: string): Promise<string> {
  await mkdir(join(dir, "user"), { recursive: true });
  const item = (name: string, value: string): string =>
    `<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="${name}" oor:op="fuse"><value>${value}</value></prop></item>`;
  await writeFile(
    join(dir, "user", "registrymodifications.xcu"),
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
      item("MacroSecurityLevel", "0"), // 0 = low: run everything, no confirmation
      item("DisableMacrosExecution", "false"),
      "</oor:items>",
      "",
    ].join("\n"),
  );
  return pathToFileURL(dir).href;
}

/**
 * Opens `doc` the way a user would (`soffice --headless <doc>`, not --convert-to: a conversion
 * loads with MacroExecutionMode NEVER, a plain open with USE_CONFIG, i.e. the profile decides),
 * waits until `done()` or `ms`, then kills soffice's whole process group.
 */
async function openInSoffice(profileUrl: string, doc: string, tmp: string, done: () => Promise<boolean>, ms: number): Promise<void> {
  await mkdir(tmp, { recursive: true });
  const office = spawn(SOFFICE, [`-env:UserInstallation=${profileUrl}`, "--headless", "--norestore", "--nologo", "--nolockcheck", doc], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, TMPDIR: tmp },
  });
  const exited = new Promise<void>((resolve) => office.once("exit", () => resolve()));
  try {
    const until = Date.now() + ms;
    while (Date.now() < until && !(await done())) await new Promise((r) => setTimeout(r, 200));
  } finally {
    const pgid = office.pid;
    if (pgid !== undefined) {
      // Members first so that oosplash (the leader) reaps soffice.bin, as office-slot.ts does.
      for (const pid of processGroupMembers(pgid)) if (pid !== pgid) kill(pid);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 1000))]);
      kill(-pgid);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      assert.deepEqual(processGroupMembers(pgid), [], "the control's soffice is gone");
      // A killed soffice leaves its single-instance socket behind (see singleInstancePipe in office-slot.ts).
      const digest = createHash("md5").update(Buffer.from(profileUrl, "utf16le")).digest();
      const pipe = `SingleOfficeIPC_${[...digest].map((b) => b.toString(16)).join("")}`;
      await rm(`/tmp/OSL_PIPE_${process.getuid?.() ?? 0}_${pipe}`, { force: true });
    }
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

test("a macro bound to a document's load event never runs during conversion", SLOW, async () => {
  await withMacroDocument(async (doc, markerDir, dir) => {
    const workDir = join(dir, "work");
    const converter = new OfficeConverter({ sandbox: DEFAULT_SANDBOX, slots: 1, workDir });
    await converter.start();
    try {
      const out = join(dir, "macro.pdf");
      await converter.convert(doc, out);
      assert.equal((await readFile(out)).subarray(0, 5).toString("latin1"), "%PDF-", "the document itself converts");
      // Events such as layout-finished may be dispatched after the load returns; give them time.
      await new Promise((r) => setTimeout(r, 2000));
      assert.deepEqual(await readdir(markerDir), [], "no macro ran while converting");
    } finally {
      await converter.close();
    }
    assert.deepEqual(await readdir(markerDir), [], "no macro ran while the converter shut down either");
  });
});

test("control: the same document does run its macros when opened with macros allowed", SLOW, async () => {
  await withMacroDocument(async (doc, markerDir, dir) => {
    const profileUrl = await permissiveProfile(join(dir, "profile"));
    const all = async (): Promise<boolean> => (await readdir(markerDir)).length === EVENTS.length;
    await openInSoffice(profileUrl, doc, join(dir, "tmp"), all, 60_000);
    assert.deepEqual((await readdir(markerDir)).sort(), EVENTS.map(markerName).sort(), "every bound event ran its macro");
    for (const event of EVENTS) {
      assert.equal((await readFile(join(markerDir, markerName(event)), "utf8")).trim(), event);
    }
  });
});

test("second line: the converter's profile alone blocks the macros even when the load would allow them", SLOW, async () => {
  await withMacroDocument(async (doc, markerDir, dir) => {
    // A plain open asks the profile (MacroExecutionMode USE_CONFIG). The control runs its macros
    // within about 2 s of starting on a fresh profile; 10 s without a marker is a clear no.
    const profileUrl = await prepareProfile(join(dir, "profile"));
    await openInSoffice(profileUrl, doc, join(dir, "tmp"), async () => (await readdir(markerDir)).length > 0, 10_000);
    assert.deepEqual(await readdir(markerDir), [], "no macro ran with the converter's profile");
  });
});

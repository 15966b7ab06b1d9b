import { readFileSync, realpathSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * A LibreOffice user profile for one converter slot, pre-seeded so that a hostile document
 * gets as little as possible out of LibreOffice itself. Every key below exists in the
 * LibreOffice 7.4 schema (checked against /usr/lib/libreoffice/share/registry/main.xcd); what
 * each one really does is written next to it, including where it is only a second line of
 * defence. The first line is the load arguments in uno-convert.py (MacroExecutionMode NEVER,
 * UpdateDocMode NO_UPDATE, ReadOnly, an interaction handler that refuses) and, for files and
 * the network, the sandbox soffice runs in (sandbox.ts): whatever a link names, it sees only its
 * own folders and no network.
 *
 * Not set, because 7.4 has no such configuration key: Writer "LoadReadonly" (a per-document
 * setting in settings.xml), "DisableActiveContent" (newer releases), and the online update check
 * (Office.Jobs/Jobs/UpdateCheck is not in Debian's build; Office.Update below belongs to the
 * separate MAR updater, not built either, so setting it is belt-and-braces). Java is not switched
 * off here: its switch lives in javasettings_*.xml, and none of the import filters used needs it.
 */
interface Setting {
  path: string;
  name: string;
  value: boolean | number | string;
}

export const PROFILE_SETTINGS: readonly Setting[] = [
  // 3 = "very high": only signed macros from trusted locations; there are no trusted locations
  // or authors in this profile, so no document macro qualifies.
  { path: "/org.openoffice.Office.Common/Security/Scripting", name: "MacroSecurityLevel", value: 3 },
  // Expert-configuration switch (no dialog for it): no macro runs at all, whatever the level.
  { path: "/org.openoffice.Office.Common/Security/Scripting", name: "DisableMacrosExecution", value: true },
  // Refuses links whose referring document is not in a trusted location (there are none here).
  // Observed on 7.4.7: it stops a linked <draw:image> (Writer and Impress) and <img> in HTML,
  // but NOT a paragraph background image (style:background-image) nor an XForms instance
  // src=: those are fetched with this set. A narrowing only; the sandbox is the fence.
  { path: "/org.openoffice.Office.Common/Security/Scripting", name: "BlockUntrustedRefererLinks", value: true },
  // Without locking LibreOffice never writes `.~lock.*#` files next to the input (read-only
  // loads should not lock anyway; this also covers loads it decides to open read-write).
  { path: "/org.openoffice.Office.Common/Misc", name: "UseLocking", value: false },
  // Writer: 0 = never (sw: NEVER/MANUAL/AUTOMATIC = 0/1/2) update linked sections and DDE links
  // on load, as the load argument UpdateDocMode=NO_UPDATE also says. Neither stops a linked
  // graphic from being fetched for rendering: observed with the default profile.
  { path: "/org.openoffice.Office.Writer/Content/Update", name: "Link", value: 0 },
  // Calc (only reached if a file turns out to be a spreadsheet): 1 = never.
  { path: "/org.openoffice.Office.Calc/Content/Update", name: "Link", value: 1 },
  // Background spelling/grammar checking only costs CPU in a converter; LanguageTool is a
  // remote grammar service (off by default, kept off explicitly because it would send text out).
  { path: "/org.openoffice.Office.Linguistic/SpellChecking", name: "IsSpellAuto", value: false },
  { path: "/org.openoffice.Office.Linguistic/GrammarChecking", name: "IsAutoCheck", value: false },
  { path: "/org.openoffice.Office.Linguistic/GrammarChecking/LanguageTool", name: "IsEnabled", value: false },
  // No autosave/recovery copies of hostile documents in the profile; we never edit anyway.
  { path: "/org.openoffice.Office.Recovery/AutoSave", name: "Enabled", value: false },
  { path: "/org.openoffice.Office.Recovery/RecoveryInfo", name: "Enabled", value: false },
  // Crash-report upload prompt (only meaningful in builds with the crash reporter).
  { path: "/org.openoffice.Office.Common/Misc", name: "CrashReport", value: false },
  { path: "/org.openoffice.Office.Update/Update", name: "Enabled", value: false },
];

/**
 * The installation's own version ("7.4"), from its registry; undefined when it cannot be read.
 * soffice compares it with ooSetupLastVersion at every start and, while the profile's is older or
 * missing, runs its graphics render tests (about 4 s of CPU, drawing 4096-pixel bitmaps). A headless
 * soffice never records the version itself, so without the seed below every slot start, restart
 * and recovery after a crash would pay for them (utl::isProductVersionUpgraded, desktop/app.cxx).
 */
export function installedOfficeVersion(soffice = "/usr/bin/soffice"): string | undefined {
  try {
    // /usr/bin/soffice links to <install>/program/soffice; the registry is <install>/share/registry.
    const registry = readFileSync(join(dirname(realpathSync(soffice)), "..", "share", "registry", "main.xcd"), "utf8");
    return /oor:name="ooSetupVersion">\s*<value>(\d+\.\d+)<\/value>/.exec(registry)?.[1];
  } catch {
    return undefined;
  }
}

let officeVersion: string | undefined | null = null;

/** PROFILE_SETTINGS, plus the version seed when the installation says which version it is. */
function profileSettings(): readonly Setting[] {
  if (officeVersion === null) officeVersion = installedOfficeVersion();
  if (officeVersion === undefined) return PROFILE_SETTINGS;
  return [...PROFILE_SETTINGS, { path: "/org.openoffice.Setup/Product", name: "ooSetupLastVersion", value: officeVersion }];
}

function xcu(settings: readonly Setting[]): string {
  const items = settings.map(
    (s) =>
      `<item oor:path="${s.path}"><prop oor:name="${s.name}" oor:op="fuse"><value>${String(s.value)}</value></prop></item>`,
  );
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    ...items,
    "</oor:items>",
    "",
  ].join("\n");
}

/**
 * Creates (or re-seeds) the profile at `dir` and returns the `-env:UserInstallation` value.
 * The settings file is rewritten on every slot start: a soffice killed mid-write may leave it
 * truncated, and anything LibreOffice added to it is of no use to a converter.
 */
export async function prepareProfile(dir: string): Promise<string> {
  const user = join(dir, "user");
  await mkdir(user, { recursive: true });
  const target = join(user, "registrymodifications.xcu");
  const tmp = `${target}.${process.pid}.tmp`;
  await writeFile(tmp, xcu(profileSettings()));
  await rename(tmp, target);
  return pathToFileURL(dir).href;
}

/**
 * Every converter (LibreOffice, its UNO helper, poppler) runs inside bubblewrap (Debian's
 * `bwrap`, the sandbox Flatpak is built on): a document can make LibreOffice read any file it can
 * name (a linked image, an INCLUDEPICTURE field…) and print paths (a FILENAME field), so what the
 * converter can see must be only what it needs. In the sandbox:
 *
 * - no network, no other process (own user, pid, network, ipc, uts, cgroup namespaces);
 * - uid/gid 65534 (nobody) in its own user namespace, no capabilities;
 * - read-only: the programs and libraries (/usr/bin, /usr/lib, /usr/lib64), the fonts and their
 *   configuration, LibreOffice's and poppler's shared data; nothing else of /usr/share or /etc;
 * - the files and folders the caller names (its input, its output folder), at neutral paths such
 *   as /work/in, so that no server path is ever visible to a document;
 * - a private /tmp (or the caller's folder mounted there), a minimal /dev, its own /proc;
 * - an environment of HOME, PATH, LANG, TMPDIR and what the caller adds: nothing of Quire's.
 *
 * It dies with the process that started it (`--die-with-parent`: the kernel's parent-death signal,
 * then the pid namespace takes every process inside with it), whatever kills that process. For the
 * short-lived programs that process is the worker's launcher (launcher.ts), which kills what it
 * started and ends when its worker ends.
 *
 * `QUIRE_UNSAFE_NO_SANDBOX=1` runs converters directly (still under prlimit, with a clean
 * environment, but seeing the whole machine as Quire's user): for machines where bubblewrap cannot
 * work, at the cost of the protection above.
 */
import { spawnSync } from "node:child_process";
import { posix } from "node:path";

/**
 * Where converters run: bubblewrap at `bwrap`, or (QUIRE_UNSAFE_NO_SANDBOX) no sandbox; `owner`
 * names the worker whose converters these are (the start-up sweep, office-workdir.ts). Made once
 * by the worker role from the configuration (`sandboxSettings`) and handed to every converter it
 * starts: no module holds a current setting, so a test's worker runs converters as `quire worker` does.
 */
export type SandboxSettings = ({ kind: "bwrap"; bwrap: string } | { kind: "none" }) & { readonly owner?: string };

export const DEFAULT_SANDBOX: SandboxSettings = { kind: "bwrap", bwrap: "/usr/bin/bwrap" };
/** Only for controls in tests and for QUIRE_UNSAFE_NO_SANDBOX. */
export const NO_SANDBOX: SandboxSettings = { kind: "none" };

/** The environment variable that names the worker owning a converter process (see office-workdir.ts). */
export const OWNER_VARIABLE = "QUIRE_CONVERTER_OF";

/** The settings QUIRE_UNSAFE_NO_SANDBOX and QUIRE_BWRAP ask for, for the worker named `owner`. */
export function sandboxSettings(config: { readonly unsafeNoSandbox: boolean; readonly bwrapPath: string }, owner?: string): SandboxSettings {
  const kind: SandboxSettings = config.unsafeNoSandbox ? { kind: "none" } : { kind: "bwrap", bwrap: config.bwrapPath };
  return owner === undefined ? kind : { ...kind, owner };
}

/** The uid and gid converters have inside their user namespace. */
export const SANDBOX_UID = 65534;

/** System paths a converter may read; `-try` binds, so a missing one (no poppler-data) is fine. */
const SYSTEM_READ_ONLY = [
  "/usr/bin",
  "/usr/lib",
  "/usr/lib64",
  "/usr/share/fonts",
  "/usr/share/fontconfig",
  "/usr/share/libreoffice",
  "/usr/share/poppler",
  "/usr/share/tesseract-ocr",
  "/usr/share/zoneinfo",
  "/etc/fonts",
  "/etc/libreoffice",
  "/etc/ld.so.cache",
  "/var/cache/fontconfig",
];

export interface SandboxSpec {
  /** Host file or folder → where the converter sees it, read-only. */
  readOnly?: ReadonlyArray<readonly [host: string, view: string]>;
  /** Host folder → where the converter sees it, writable. */
  writable?: ReadonlyArray<readonly [host: string, view: string]>;
  /** Host folder that is the converter's /tmp (and TMPDIR); default: an empty private one. */
  tmp?: string;
  /** Variables beyond HOME, PATH, LANG and TMPDIR. */
  env?: Readonly<Record<string, string>>;
  /** prlimit --as, in bytes. */
  addressSpaceBytes: number;
}

export interface SandboxedCommand {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** One converter's view of the machine, for building its command line. */
export interface SandboxView {
  /** How the converter names `hostPath` (one of the spec's paths, or inside one of its folders). */
  path(hostPath: string): string;
  command(cmd: string, args: readonly string[]): SandboxedCommand;
}

export function sandboxView(spec: SandboxSpec, settings: SandboxSettings): SandboxView {
  const mounts = [...(spec.readOnly ?? []), ...(spec.writable ?? [])];
  if (spec.tmp !== undefined) mounts.push([spec.tmp, "/tmp"]);
  const sandboxed = settings.kind === "bwrap";
  const baseEnv: Record<string, string> = {
    HOME: "/tmp",
    PATH: "/usr/bin",
    LANG: "C.UTF-8",
    TMPDIR: sandboxed ? "/tmp" : spec.tmp ?? "/tmp",
    ...spec.env,
  };
  const limit = ["--as=" + String(spec.addressSpaceBytes), "--"];
  // Marks the outermost process as this worker's, for the start-up sweep (office-workdir.ts).
  const marker = settings.owner ? { [OWNER_VARIABLE]: settings.owner } : {};
  return {
    path(hostPath) {
      if (!sandboxed) return hostPath;
      for (const [host, view] of mounts) {
        if (hostPath === host) return view;
        const rel = posix.relative(host, hostPath);
        if (rel && !rel.startsWith("..") && !posix.isAbsolute(rel)) return posix.join(view, rel);
      }
      throw new Error(`${hostPath} is not visible in the converter's sandbox`);
    },
    command(cmd, args) {
      if (settings.kind === "none") {
        return { file: "prlimit", args: [...limit, cmd, ...args], env: { ...baseEnv, ...marker } };
      }
      return { file: "prlimit", args: [...limit, settings.bwrap, ...bwrapArgs(spec, baseEnv), "--", cmd, ...args], env: { PATH: "/usr/bin:/bin", ...marker } };
    },
  };
}

function bwrapArgs(spec: SandboxSpec, env: Record<string, string>): string[] {
  const args = [
    "--unshare-all", // user, pid, network, ipc, uts, cgroup: no network, no other process
    "--die-with-parent",
    "--uid", String(SANDBOX_UID),
    "--gid", String(SANDBOX_UID),
    "--cap-drop", "ALL",
    "--hostname", "sandbox",
    "--clearenv",
  ];
  for (const [k, v] of Object.entries(env)) args.push("--setenv", k, v);
  for (const p of SYSTEM_READ_ONLY) args.push("--ro-bind-try", p, p);
  args.push(
    "--symlink", "usr/bin", "/bin",
    "--symlink", "usr/lib", "/lib",
    "--symlink", "usr/lib64", "/lib64",
    "--proc", "/proc",
    "--dev", "/dev",
  );
  if (spec.tmp !== undefined) args.push("--bind", spec.tmp, "/tmp");
  else args.push("--tmpfs", "/tmp");
  for (const [host, view] of spec.readOnly ?? []) args.push("--ro-bind", host, view);
  for (const [host, view] of spec.writable ?? []) args.push("--bind", host, view);
  return args;
}

/**
 * Throws, with what to do about it, unless a sandbox can be built here. Run once at start: a
 * worker refuses to start rather than run converters unconfined.
 */
export function assertSandboxWorks(settings: SandboxSettings): void {
  if (settings.kind === "none") return;
  const { file, args, env } = sandboxView({ addressSpaceBytes: 1024 ** 3 }, settings).command("/usr/bin/true", []);
  const probe = spawnSync(file, args, { encoding: "utf8", env, timeout: 30_000 });
  if (probe.status === 0) return;
  const why = probe.error?.message ?? (probe.stderr.trim() || `exit status ${String(probe.status ?? probe.signal)}`);
  throw new Error(
    `the converters' sandbox cannot be built: \`${settings.bwrap}\` failed (${why}). Install bubblewrap ` +
      "(Debian: apt-get install bubblewrap) or set QUIRE_BWRAP to its path; it needs user namespaces " +
      "(in Docker: the worker's container needs cap_add SYS_ADMIN, or a seccomp profile allowing them). " +
      "Without it a document can make LibreOffice read the server's files. Only if you accept that, " +
      "QUIRE_UNSAFE_NO_SANDBOX=1 runs converters unconfined.",
  );
}

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The shared fixtures, used in place. */
export const FIXTURES = fileURLToPath(new URL("../../shared/fixtures/", import.meta.url));

/** Runs a program to its end; rejects with the start of its stderr when it fails. */
export function exec(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}: ${err.slice(0, 300)}`))));
  });
}

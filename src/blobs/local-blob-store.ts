import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { copyFile, mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { assertValidKey } from "./blob-keys.ts";
import { deleteListed, type BlobStore } from "./blob-store.ts";
import { removeStaleEntries } from "./stale-entries.ts";

/** Temp files live under the root so the final rename never crosses a file system. */
const TMP_DIR = ".tmp";

export class LocalBlobStore implements BlobStore {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  /** A fresh path for a spool or temp file on the same file system as the blobs. */
  async tempPath(): Promise<string> {
    const dir = join(this.root, TMP_DIR);
    await mkdir(dir, { recursive: true });
    return join(dir, randomBytes(12).toString("hex"));
  }

  private pathOf(key: string): string {
    assertValidKey(key);
    return join(this.root, ...key.split("/"));
  }

  async put(key: string, body: Readable): Promise<number> {
    // A body that fails before the copy below starts (a client gone while the file opens) must
    // not throw its error at the process: the pipeline finds the body failed and rejects.
    body.on("error", () => undefined);
    const tmp = await this.tempPath();
    // Opened before the copy, not by the stream: a body failing at once rejected the pipeline
    // while the stream was still opening its file, which then appeared after the removal below.
    const file = await open(tmp, "wx");
    // Counted from here: a listener starts the body flowing, and its errors must meet the pipeline.
    let bytes = 0;
    body.on("data", (chunk: Buffer) => (bytes += chunk.length));
    try {
      await pipeline(body, file.createWriteStream());
      await this.commit(tmp, this.pathOf(key));
      return bytes;
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async putFile(key: string, path: string): Promise<void> {
    const target = this.pathOf(key);
    try {
      await this.commit(path, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
      const tmp = await this.tempPath();
      try {
        await copyFile(path, tmp);
        await this.commit(tmp, target);
      } finally {
        await rm(tmp, { force: true });
      }
      await rm(path, { force: true });
    }
  }

  /** fsync the data, rename into place, fsync the folder: the object is whole and durable or absent. */
  private async commit(tmp: string, target: string): Promise<void> {
    const fh = await open(tmp, "r+");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await mkdir(dirname(target), { recursive: true });
    await rename(tmp, target);
    const dir = await open(dirname(target), "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  async get(key: string): Promise<Readable> {
    const path = this.pathOf(key);
    await stat(path); // fail here, not later inside a pipe
    return createReadStream(path);
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.pathOf(key))).isFile();
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  deletePrefix(prefix: string, keep?: readonly string[]): Promise<number> {
    return deleteListed(this, prefix, keep);
  }

  async listWithTimes(prefix: string): Promise<Array<{ key: string; modifiedAt: number }>> {
    const out: Array<{ key: string; modifiedAt: number }> = [];
    for (const key of await this.list(prefix)) {
      try {
        out.push({ key, modifiedAt: (await stat(this.pathOf(key))).mtimeMs });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err; // deleted since listed
      }
    }
    return out;
  }

  /** Spool files a crash left behind (a finished upload's spool is renamed away or removed at once). */
  async removeStaleTemp(before: number): Promise<number> {
    return removeStaleEntries(join(this.root, TMP_DIR), before);
  }


  /**
   * The folder a listing starts from: the deepest one the prefix names whole (`docs/ab/` and
   * `docs/ab/pa` both start in docs/ab), so a document's listing (every delete makes one) reads its
   * own folders, not the whole store. A prefix with an odd segment starts from the root: the filter
   * by prefix keeps the answer right either way.
   */
  private startOf(prefix: string): string {
    const folders = prefix.split("/").slice(0, -1);
    return folders.every((f) => f !== "" && f !== "." && f !== ".." && f !== TMP_DIR && !f.includes("\\")) ? join(this.root, ...folders) : this.root;
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
        throw err;
      }
      for (const e of entries) {
        const full = join(dir, e.name);
        if (e.isDirectory()) {
          if (full !== join(this.root, TMP_DIR)) await walk(full);
        } else {
          const key = relative(this.root, full).split(sep).join("/");
          if (key.startsWith(prefix)) keys.push(key);
        }
      }
    };
    await walk(this.startOf(prefix));
    return keys.sort();
  }
}

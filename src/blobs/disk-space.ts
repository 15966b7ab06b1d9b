/**
 * Free space of the data disk (issue 23 item 0d): the blob folder (local blobs) and the temp
 * folder (conversions' scratch, LibreOffice, and the upload spool of S3 blobs). While one of them
 * has less than the minimum free, new uploads are refused with a temporary error, conversions wait
 * for space instead of failing, and /readyz answers 503 naming the folder.
 */
import { statfs } from "node:fs/promises";
import { dirname } from "node:path";

export interface WatchedFolder {
  /** How the folder is named to people (never its path: /readyz answers anyone who reaches it). */
  name: string;
  path: string;
}

export interface DiskSpace {
  /** The folders watched and the least free space each must keep. */
  readonly folders: readonly WatchedFolder[];
  readonly minFreeBytes: number;
  /** Undefined while every folder has at least `minFreeBytes` free; else a sentence naming the first that has not. */
  shortage(): Promise<string | undefined>;
}

/** Bytes an unprivileged process may still write on the file system holding `path` (or its nearest existing parent). */
export async function freeBytes(path: string): Promise<number> {
  for (let at = path; ; at = dirname(at)) {
    try {
      const s = await statfs(at);
      return Number(s.bavail) * Number(s.bsize);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || dirname(at) === at) throw err;
    }
  }
}

const MB = 1024 * 1024;

export function watchDiskSpace(folders: readonly WatchedFolder[], minFreeBytes: number): DiskSpace {
  return {
    folders,
    minFreeBytes,
    async shortage() {
      if (minFreeBytes <= 0) return undefined;
      for (const f of folders) {
        const free = await freeBytes(f.path);
        if (free < minFreeBytes) {
          return `the data disk is full: the ${f.name} has ${(free / MB).toFixed(1)} MB free, less than the ${Math.round(minFreeBytes / MB)} MB required (QUIRE_MIN_FREE_DISK_MB)`;
        }
      }
      return undefined;
    },
  };
}

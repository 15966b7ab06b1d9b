import type { DiskSpace } from "../blobs/disk-space.ts";
import { QuireError } from "../domain/errors.ts";
import { isNoSpaceError } from "../domain/job-failure.ts";

/**
 * Refuses a new upload while the data disk is short of space (issue 23 item 0d): 012 "Request
 * throttled", the historic API's one temporary refusal, which clients already read as "try again
 * later" (docs/api.md, Uploads). Asked before an upload's file is spooled and before its record is
 * written, so nothing is stored; documents already accepted wait for space in the worker.
 */
export async function assertRoomForUploads(space: Pick<DiskSpace, "shortage"> | undefined): Promise<void> {
  if (space === undefined) return;
  if ((await space.shortage()) !== undefined) throw new DiskFullRefusal();
}

/** 012 for the API, as any temporary refusal; the app tells a person that the disk is the reason. */
export class DiskFullRefusal extends QuireError {
  constructor() {
    super("012");
  }
}

/** The refusal an upload gets when the disk filled while it was spooled or stored (ENOSPC anywhere in its causes). */
export function diskFullRefusalOf(err: unknown): DiskFullRefusal | undefined {
  return err instanceof DiskFullRefusal ? err : isNoSpaceError(err) ? new DiskFullRefusal() : undefined;
}

/** A spool whose every new file is refused (012) while the data disk is short of space. */
export function guardedSpool<S extends { tempPath(): Promise<string> }>(spool: S, space: Pick<DiskSpace, "shortage"> | undefined): { tempPath(): Promise<string> } {
  return {
    async tempPath() {
      await assertRoomForUploads(space);
      return spool.tempPath();
    },
  };
}

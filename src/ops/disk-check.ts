import type { DiskSpace } from "../blobs/disk-space.ts";
import type { ReadinessCheck } from "./health.ts";

/** /readyz's `disk`: fails, naming the folder, while the data disk is short of space (QUIRE_MIN_FREE_DISK_MB). */
export function diskCheck(space: Pick<DiskSpace, "shortage">): ReadinessCheck {
  return async () => {
    const shortage = await space.shortage();
    if (shortage !== undefined) throw new Error(shortage);
  };
}

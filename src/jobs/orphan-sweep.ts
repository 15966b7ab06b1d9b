import type { Logger } from "pino";
import { blobIdOf, blobKeys } from "../blobs/blob-keys.ts";
import type { BlobStore } from "../blobs/blob-store.ts";
import { removeStaleEntries } from "../blobs/stale-entries.ts";
import type { BlobReferencesRepo } from "../store/blob-references.ts";

export interface OrphanSweepOptions {
  blobs: BlobStore;
  references: BlobReferencesRepo;
  log: Logger;
  /**
   * Nothing written more recently than this is touched: an upload moves its original into place
   * just before its record is committed, and a conversion writes pages while it runs.
   */
  graceMs: number;
  /** The worker's scratch folder: conversion folders (`convert-*`) a killed worker left there go too. */
  scratchDir?: string;
  now?: () => number;
}

export interface OrphanSweepReport {
  /** Blob folders (`documents/<blobId>/`) removed because no document references them. */
  orphanFolders: number;
  orphanBlobs: number;
  /** Upload spool files and conversion scratch folders a crash left behind. */
  staleTemp: number;
}

/**
 * Removes what crashes leave in the blob store: folders under `documents/<blobId>/` that no
 * document record references (a server killed between storing an upload and committing its record,
 * a delete whose blob removal was cut short), once every object in the folder is older than the
 * grace period; and stale upload spool files. A folder whose record exists is never touched.
 */
export async function sweepOrphanBlobs(opts: OrphanSweepOptions): Promise<OrphanSweepReport> {
  const report: OrphanSweepReport = { orphanFolders: 0, orphanBlobs: 0, staleTemp: 0 };
  const cutoff = (opts.now ?? Date.now)() - opts.graceMs;
  if (opts.blobs.removeStaleTemp) report.staleTemp = await opts.blobs.removeStaleTemp(cutoff);
  if (opts.scratchDir !== undefined) report.staleTemp += await removeStaleScratch(opts.scratchDir, cutoff);
  if (!opts.blobs.listWithTimes) return report;

  const folders = new Map<string, { keys: string[]; newest: number }>();
  for (const { key, modifiedAt } of await opts.blobs.listWithTimes(blobKeys.root)) {
    const blobId = blobIdOf(key);
    if (blobId === undefined) continue;
    const folder = folders.get(blobId) ?? { keys: [], newest: 0 };
    folder.keys.push(key);
    folder.newest = Math.max(folder.newest, modifiedAt);
    folders.set(blobId, folder);
  }
  const settled = [...folders].filter(([, f]) => f.newest < cutoff).map(([blobId]) => blobId);
  // Asked after listing: a record committed meanwhile is seen, so its folder stays.
  const referenced = await opts.references.referencedBlobIds(settled);
  for (const blobId of settled) {
    if (referenced.has(blobId)) continue;
    for (const key of folders.get(blobId)!.keys) await opts.blobs.delete(key);
    report.orphanFolders++;
    report.orphanBlobs += folders.get(blobId)!.keys.length;
  }
  if (report.orphanFolders + report.staleTemp > 0) opts.log.warn(report, "orphan clean-up removed blobs no record references");
  return report;
}

/** A running conversion's folder is written to all along; one untouched past the grace period is a dead worker's. */
function removeStaleScratch(dir: string, cutoff: number): Promise<number> {
  return removeStaleEntries(dir, cutoff, (name) => name.startsWith("convert-"));
}

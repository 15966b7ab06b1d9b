import type { FileHandle } from "node:fs/promises";

/**
 * Classifies an OLE2 compound file (MS-CFB) by the streams at the top of its directory tree.
 * Only the header, the DIFAT/FAT sectors covering the directory chain and the directory sectors are read.
 */

/** What a compound file holds: a legacy Office document, or an encrypted OOXML package (MS-OFFCRYPTO). */
export type OleKind = "doc" | "ppt" | "xls" | "encrypted-ooxml";

export const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

const HEADER_SIZE = 512;
const HEADER_DIFAT_ENTRIES = 109;
const DIR_ENTRY_SIZE = 128;
/** Sector ids at or above this are markers (DIFSECT, FATSECT, ENDOFCHAIN, FREESECT), not positions. */
const MAX_REG_SECT = 0xfffffffa;
const NO_STREAM = 0xffffffff;
/** Real documents have a few hundred directory entries; this bounds memory and time on forged headers. */
const MAX_DIR_ENTRIES = 65_536;

/** Root-level stream names (upper-cased: CFB names compare case-insensitively), strongest claim first. */
const STREAM_KINDS: ReadonlyArray<readonly [string, OleKind]> = [
  // Office 2007+ encryption wraps the whole zip package in this stream, beside `EncryptionInfo`.
  ["ENCRYPTEDPACKAGE", "encrypted-ooxml"],
  // Word 6, 95, 97-2003 (Windows and Mac).
  ["WORDDOCUMENT", "doc"],
  // PowerPoint 95 and 97-2003.
  ["POWERPOINT DOCUMENT", "ppt"],
  // PowerPoint 4.0 (Windows and Mac) keeps its presentation in a `PP40` stream; LibreOffice imports it.
  ["PP40", "ppt"],
  // Excel 97-2003 (BIFF8) `Workbook`; Excel 5.0/95 (BIFF5) `Book`.
  ["WORKBOOK", "xls"],
  ["BOOK", "xls"],
];

interface DirEntry {
  name: string;
  type: number;
  left: number;
  right: number;
  child: number;
}

/** Reads exactly `length` bytes or returns null, so a truncated file reads as "not this format". */
export async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer | null> {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buf, done, length - done, position + done);
    if (bytesRead === 0) return null;
    done += bytesRead;
  }
  return buf;
}

export async function detectOle(handle: FileHandle, size: number): Promise<OleKind | null> {
  const header = await readAt(handle, 0, HEADER_SIZE);
  if (!header || !header.subarray(0, 8).equals(OLE_MAGIC)) return null;

  const shift = header.readUInt16LE(0x1e);
  // MS-CFB only allows 512-byte (v3) and 4096-byte (v4) sectors; anything else is forged or broken.
  if (shift !== 9 && shift !== 12) return null;
  const sectorSize = 1 << shift;
  const idsPerSector = sectorSize / 4;
  // Upper bound for every chain walk below: no valid chain can be longer than the file has sectors.
  const sectorCount = Math.floor(size / sectorSize);

  const sectorOffset = (sid: number): number | null => {
    if (sid >= MAX_REG_SECT) return null;
    const offset = (sid + 1) * sectorSize;
    return offset + sectorSize <= size ? offset : null;
  };
  const readSector = async (sid: number): Promise<Buffer | null> => {
    const offset = sectorOffset(sid);
    return offset === null ? null : readAt(handle, offset, sectorSize);
  };

  const fatSectors = await readFatSectorList(header, readSector, idsPerSector, sectorCount);
  if (!fatSectors) return null;

  const fatCache = new Map<number, Buffer>();
  const nextSector = async (sid: number): Promise<number | null> => {
    const fatIndex = Math.floor(sid / idsPerSector);
    const fatSid = fatSectors[fatIndex];
    if (fatSid === undefined) return null;
    let fat = fatCache.get(fatIndex);
    if (!fat) {
      const read = await readSector(fatSid);
      if (!read) return null;
      fat = read;
      fatCache.set(fatIndex, fat);
    }
    return fat.readUInt32LE((sid % idsPerSector) * 4);
  };

  const entries: DirEntry[] = [];
  const visited = new Set<number>();
  let sid = header.readUInt32LE(0x30);
  // ENDOFCHAIN (and any other marker) ends the directory; a repeated sector means a cycle.
  while (sid < MAX_REG_SECT && entries.length < MAX_DIR_ENTRIES) {
    if (visited.has(sid) || visited.size >= sectorCount) return null;
    visited.add(sid);
    const sector = await readSector(sid);
    if (!sector) return null;
    for (let off = 0; off + DIR_ENTRY_SIZE <= sectorSize; off += DIR_ENTRY_SIZE) {
      entries.push(parseDirEntry(sector.subarray(off, off + DIR_ENTRY_SIZE)));
    }
    const next = await nextSector(sid);
    if (next === null) return null;
    sid = next;
  }
  return classifyRootChildren(entries);
}

/** Collects the FAT's own sector ids: 109 in the header, the rest in the chained DIFAT sectors. */
async function readFatSectorList(
  header: Buffer,
  readSector: (sid: number) => Promise<Buffer | null>,
  idsPerSector: number,
  sectorCount: number,
): Promise<number[] | null> {
  // The FAT needs at most one sector per idsPerSector sectors of file; more is a forged count.
  const maxFatSectors = Math.ceil(sectorCount / idsPerSector) + 1;
  const fatCount = Math.min(header.readUInt32LE(0x2c), maxFatSectors);
  const list: number[] = [];
  for (let i = 0; i < HEADER_DIFAT_ENTRIES && list.length < fatCount; i++) {
    list.push(header.readUInt32LE(0x4c + i * 4));
  }
  let difatSid = header.readUInt32LE(0x44);
  let difatLeft = header.readUInt32LE(0x48);
  const seen = new Set<number>();
  while (list.length < fatCount && difatLeft > 0 && difatSid < MAX_REG_SECT) {
    if (seen.has(difatSid)) return null;
    seen.add(difatSid);
    difatLeft--;
    const sector = await readSector(difatSid);
    if (!sector) return null;
    // The last id of each DIFAT sector links to the next DIFAT sector.
    for (let i = 0; i < idsPerSector - 1 && list.length < fatCount; i++) {
      list.push(sector.readUInt32LE(i * 4));
    }
    difatSid = sector.readUInt32LE((idsPerSector - 1) * 4);
  }
  return list;
}

function parseDirEntry(raw: Buffer): DirEntry {
  // The stored length counts bytes including the terminating UTF-16 NUL.
  const nameBytes = Math.min(raw.readUInt16LE(0x40), 64);
  const nameLength = Math.max(0, nameBytes - 2) & ~1;
  return {
    name: raw.toString("utf16le", 0, nameLength),
    type: raw[0x42] ?? 0,
    left: raw.readUInt32LE(0x44),
    right: raw.readUInt32LE(0x48),
    child: raw.readUInt32LE(0x4c),
  };
}

/**
 * Only the root storage's own children count: an Excel workbook with an embedded Word object has a
 * `WordDocument` stream too, but inside a sub-storage.
 */
function classifyRootChildren(entries: DirEntry[]): OleKind | null {
  const root = entries[0];
  if (!root || root.type !== 5) return null;
  const names = new Set<string>();
  const stack = [root.child];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const id = stack.pop();
    if (id === undefined || id === NO_STREAM || seen.has(id)) continue;
    seen.add(id);
    const entry = entries[id];
    if (!entry) continue;
    if (entry.type === 2) names.add(entry.name.toUpperCase());
    stack.push(entry.left, entry.right);
  }
  return STREAM_KINDS.find(([name]) => names.has(name))?.[1] ?? null;
}

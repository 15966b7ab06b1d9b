/**
 * A minimal OLE2 compound file (MS-CFB v3, 512-byte sectors) for tests that forge directories:
 * sector 0 is the FAT, the directory starts at sector 1. `fatTail` is what the FAT says after its
 * own entry, so chains can be made to loop or point outside the file on purpose.
 */

export const FREESECT = 0xffffffff;
export const ENDOFCHAIN = 0xfffffffe;
const FATSECT = 0xfffffffd;

export interface OleDirEntry {
  name: string;
  type: 1 | 2 | 5;
  left?: number;
  right?: number;
  child?: number;
}

export function buildOle(entries: OleDirEntry[], fatTail: number[]): Buffer {
  const header = Buffer.alloc(512);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(header, 0);
  header.writeUInt16LE(0x3e, 0x18);
  header.writeUInt16LE(3, 0x1a);
  header.writeUInt16LE(0xfffe, 0x1c);
  header.writeUInt16LE(9, 0x1e);
  header.writeUInt16LE(6, 0x20);
  header.writeUInt32LE(1, 0x2c);
  header.writeUInt32LE(1, 0x30);
  header.writeUInt32LE(0x1000, 0x38);
  header.writeUInt32LE(ENDOFCHAIN, 0x3c);
  header.writeUInt32LE(ENDOFCHAIN, 0x44);
  for (let i = 0; i < 109; i++) header.writeUInt32LE(i === 0 ? 0 : FREESECT, 0x4c + i * 4);

  const fat = Buffer.alloc(512, 0xff);
  [FATSECT, ...fatTail].forEach((v, i) => fat.writeUInt32LE(v, i * 4));

  const dirSectors = Math.max(1, Math.ceil(entries.length / 4));
  const dir = Buffer.alloc(512 * dirSectors);
  entries.forEach((e, i) => {
    const raw = dir.subarray(i * 128, i * 128 + 128);
    const name = Buffer.from(`${e.name}\0`, "utf16le");
    name.copy(raw, 0);
    raw.writeUInt16LE(name.length, 0x40);
    raw[0x42] = e.type;
    raw.writeUInt32LE(e.left ?? FREESECT, 0x44);
    raw.writeUInt32LE(e.right ?? FREESECT, 0x48);
    raw.writeUInt32LE(e.child ?? FREESECT, 0x4c);
  });
  return Buffer.concat([header, fat, dir]);
}

/** A root storage whose only child is one stream of this name. */
export function oleWithStream(name: string): Buffer {
  return buildOle([{ name: "Root Entry", type: 5, child: 1 }, { name, type: 2 }], [ENDOFCHAIN]);
}

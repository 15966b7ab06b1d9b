/**
 * Image quality measures the benchmarks share: how close an encoded page is to its pixels.
 */

export interface Raw {
  /** RGB, 3 bytes a pixel. */
  data: Buffer;
  width: number;
  height: number;
}

export function luma(raw: Raw): Float32Array {
  const y = new Float32Array(raw.width * raw.height);
  for (let i = 0, p = 0; i < y.length; i++, p += 3) y[i] = 0.299 * raw.data[p]! + 0.587 * raw.data[p + 1]! + 0.114 * raw.data[p + 2]!;
  return y;
}

/**
 * Mean SSIM of luma over 8×8 windows (stride 4) that have content in the reference. Blank paper
 * compresses perfectly in every format, so counting it would rate every encoder ~1.0 on text pages.
 */
export function ssim(a: Float32Array, b: Float32Array, width: number, height: number): number {
  const C1 = (0.01 * 255) ** 2;
  const C2 = (0.03 * 255) ** 2;
  let sum = 0;
  let n = 0;
  for (let y0 = 0; y0 + 8 <= height; y0 += 4) {
    for (let x0 = 0; x0 + 8 <= width; x0 += 4) {
      let sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
      for (let y = y0; y < y0 + 8; y++) {
        for (let x = x0; x < x0 + 8; x++) {
          const va = a[y * width + x]!;
          const vb = b[y * width + x]!;
          sa += va; sb += vb; saa += va * va; sbb += vb * vb; sab += va * vb;
        }
      }
      const ma = sa / 64, mb = sb / 64;
      const va = saa / 64 - ma * ma, vb = sbb / 64 - mb * mb, cov = sab / 64 - ma * mb;
      if (va <= 16) continue;
      sum += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
      n++;
    }
  }
  return n ? sum / n : 1;
}

import fs from "node:fs";

/**
 * A slow disk (or a busy thread pool) for this process: every `fs.open` ends `ms` later. Node's
 * file streams open through it. `began` settles at the first open asked for, `opened` once that
 * open has ended; `restore` puts the real one back.
 */
export function delayFsOpen(ms: number): { began: Promise<void>; opened: Promise<void>; restore(): void } {
  const realOpen = fs.open;
  let began!: () => void;
  let opened!: () => void;
  const result = {
    began: new Promise<void>((r) => (began = r)),
    opened: new Promise<void>((r) => (opened = r)),
    restore: () => void (fs.open = realOpen),
  };
  fs.open = ((...args: unknown[]) => {
    const callback = args.pop() as (...a: unknown[]) => void;
    began();
    setTimeout(() => (realOpen as (...a: unknown[]) => void)(...args, (...answer: unknown[]) => {
      callback(...answer);
      opened();
    }), ms);
  }) as typeof fs.open;
  return result;
}

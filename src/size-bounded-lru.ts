/**
 * A least-recently-used map bounded by the total size of its entries, as `sizeOf` counts it.
 * An entry over `maxEntry` is not kept at all, so that one huge value cannot push out all others.
 */
export class SizeBoundedLru<K, V> {
  private readonly entries = new Map<K, V>();
  private total = 0;

  constructor(
    private readonly limits: { maxTotal: number; maxEntry: number },
    private readonly sizeOf: (key: K, value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  /** Whether the key is kept, without making it the most recently used. */
  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): void {
    const size = this.sizeOf(key, value);
    if (size > this.limits.maxEntry) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) this.forget(key, previous);
    this.entries.set(key, value);
    this.total += size;
    for (const [oldKey, old] of this.entries) {
      if (this.total <= this.limits.maxTotal) break;
      this.forget(oldKey, old);
    }
  }

  private forget(key: K, value: V): void {
    this.entries.delete(key);
    this.total -= this.sizeOf(key, value);
  }
}

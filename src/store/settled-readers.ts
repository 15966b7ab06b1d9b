/**
 * What the statistics writer already knows can no longer change today, by reader key (decisions
 * §15): a reader who has viewed (another view of theirs counts for nothing), who has downloaded
 * (likewise a download), or whom their address's cap turned away (nothing of theirs counts today).
 * Each is for good within its day, whichever process counted it: a reader row is only ever made
 * more complete, and an address's count of readers only grows. So a batch drops the events these
 * settle before its transaction, where each was a key looked up and a row made and thrown away:
 * in a flood (an address sending one user agent after another) that was nearly all of the
 * writer's work, for views that could never count.
 *
 * In memory only, and only what the database itself holds for the day (the keys, never an
 * address): the last two days', at most MAX_KEYS a day (then that day starts again; a key not
 * here is only looked up as before).
 */
export const VIEWED = 1;
export const DOWNLOADED = 2;
/** The address's cap was reached before this reader's first view or download: nothing of theirs counts today. */
export const TURNED_AWAY = 4;

const MAX_KEYS = 200_000;

export class SettledReaders {
  private readonly days = new Map<string, Map<string, number>>();

  /** A reader key is of one document (its hash takes the document in): the document is checked too, as the transaction does. */
  of(day: string, readerKey: string, documentId: string): number {
    return this.days.get(day)?.get(`${readerKey}\0${documentId}`) ?? 0;
  }

  /** To be called once what it says is committed. */
  note(day: string, readerKey: string, documentId: string, settled: number): void {
    if (settled === 0) return;
    let keys = this.days.get(day);
    if (!keys || keys.size >= MAX_KEYS) {
      keys = new Map();
      this.days.set(day, keys);
      // Batches hold today's events and, just past midnight, yesterday's.
      if (this.days.size > 2) this.days.delete([...this.days.keys()].sort()[0]!);
    }
    const key = `${readerKey}\0${documentId}`;
    keys.set(key, (keys.get(key) ?? 0) | settled);
  }

  /** The event's part in the batch: "skip" (counts for nothing), "noop" (counts, changes nothing) or "apply". */
  static verdict(kind: "view" | "download" | "beacon", settled: number): "skip" | "noop" | "apply" {
    if (settled & TURNED_AWAY) return "skip";
    if (kind === "view" && settled & VIEWED) return "noop";
    if (kind === "download" && settled & DOWNLOADED) return "noop";
    return "apply";
  }
}

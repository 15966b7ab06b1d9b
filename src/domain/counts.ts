/**
 * A count as people read it: "1 page", "2 pages", "0 pages". Every number shown next to a noun
 * goes through here, so no screen or message says "1 pages" (issue 14 item 8).
 */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

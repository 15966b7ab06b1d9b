/** `page` (from 1; the WordPress plugin's 0 counts as 1) and `size` after the schema, as an offset. */
export function pageOf(query: Record<string, unknown>): { page: number; size: number; offset: number; q: string | undefined } {
  const page = Math.max(1, Number(query.page ?? 1));
  const size = Number(query.size ?? 10);
  const q = typeof query.q === "string" && query.q !== "" ? query.q : undefined;
  return { page, size, offset: (page - 1) * size, q };
}

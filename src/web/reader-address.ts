/**
 * The one address of each variant of a reader page (docs/web.md, "Reader addresses"). The page
 * reads `page`, `q`, `embed` and `consent`; every other form of them (`page=007`, `page=abc1`, a
 * page past the end, `q=%20%20`, `q=  storm   front `, `consent=yes`) is redirected to its
 * canonical address, and only canonical values ever reach the page cache's key: spellings of one
 * page cannot each build and keep a copy of it.
 */

/** Characters of `q` the reader searches for (the search page links with as many). */
export const READER_QUERY_CHARS = 200;

/** A reader's query as searched: cut to READER_QUERY_CHARS, runs of white space made one space, trimmed. */
export function readerQueryText(raw: string): string {
  return raw.slice(0, READER_QUERY_CHARS).replace(/\s+/g, " ").trim();
}

/**
 * The reader's own parameters, in the order of a canonical address: an embed's as its embed code
 * writes it (`?embed=<id>&page=<its start page>`, domain/embeds.ts), then the query and consent.
 */
export const READER_PARAMS = ["embed", "page", "q", "consent"] as const;

export interface ReaderVariant {
  /** The page shown first, from 1 to the document's page count. */
  startPage: number;
  query: string;
  /** The embed id (`/embed?embed=N`) that chose startPage, when one did. */
  embedId: number | undefined;
  consented: boolean;
  /** The canonical query string of this variant, without `?` ("" for none). */
  search: string;
  /** Whether the canonical form follows from the address alone (a 301), not from the document as it is now (a 302). */
  permanent: boolean;
}

/** A number written in decimal digits (leading zeros allowed: they are redirected away), of at most `digits`. */
const decimal = (s: string | undefined, digits = 15): number | undefined => (s !== undefined && s.length <= digits && /^[0-9]+$/.test(s) ? Number(s) : undefined);

/**
 * The variant asked for, made canonical. `query`: each name's first value. `embedStart`: the first
 * page of an embed of this document by its id, undefined when there is no such embed (asked only
 * on an embed address with a numeric `embed`).
 */
export async function readerVariant(
  query: Readonly<Record<string, string | undefined>>,
  pageCount: number,
  embedStart: ((id: number) => Promise<number | undefined>) | undefined,
): Promise<ReaderVariant> {
  let permanent = true;
  // Nine digits, as the embeds' ids are kept (a 32-bit integer column on PostgreSQL).
  const embedAsked = decimal(query.embed, 9);
  let embedId: number | undefined;
  let fromEmbed: number | undefined;
  if (embedStart && embedAsked !== undefined && embedAsked > 0) {
    fromEmbed = await embedStart(embedAsked);
    if (fromEmbed === undefined) permanent = false; // no such embed now: it may exist later
    else embedId = embedAsked;
  }
  const asked = decimal(query.page);
  let page = 1;
  if (fromEmbed === undefined && asked !== undefined && asked > 0) {
    page = Math.min(asked, pageCount);
    if (asked > pageCount) permanent = false; // the document's length decides
  }
  const startPage = Math.min(Math.max(1, fromEmbed ?? page), pageCount);
  const q = readerQueryText(query.q ?? "");
  const consented = query.consent === "1";
  const params = new URLSearchParams();
  if (embedId !== undefined) params.set("embed", String(embedId));
  // An embed's page is written even when it is 1, as its embed code writes it; page 1 alone is no page.
  if (embedId !== undefined || startPage > 1) params.set("page", String(startPage));
  if (q) params.set("q", q);
  if (consented) params.set("consent", "1");
  return { startPage, query: q, embedId, consented, search: params.toString(), permanent };
}

/** The reader's own parameters as the address holds them (their order and spelling kept), any others left out. */
export function askedSearch(url: string): string {
  const at = url.indexOf("?");
  if (at === -1) return "";
  const own = new URLSearchParams();
  for (const [k, v] of new URLSearchParams(url.slice(at + 1))) if ((READER_PARAMS as readonly string[]).includes(k)) own.append(k, v);
  return own.toString();
}

import type { DocumentRecord } from "../domain/document.ts";
import { coverPath, docPath, embedPath, profilePath } from "./document-paths.ts";
import { escapeText } from "./html.ts";

/**
 * oEmbed (https://oembed.com/, "rich" type): `/oembed?url=<reader address>` answers the embed
 * iframe, so a site that knows oEmbed embeds a document from its address alone. Reader pages name
 * this endpoint in their head (discovery); no listing ever links it.
 */

/** The embed's default size (decisions §8, `svc.document_embed.add`). */
export const OEMBED_SIZE = { width: 525, height: 340 } as const;
/** Cover sizes as rendered (the medium cover is 300 pixels wide). */
const THUMBNAIL_WIDTH = 300;
const READER_PATH = /^\/([^/]+)\/docs\/([^/]+)(?:\/embed)?\/?$/;

export interface OembedTarget {
  username: string;
  name: string;
  /** The page the address opens at, if it names one (`?page=` or `#page=`). */
  page: number | undefined;
}

/**
 * The reader a `url` parameter names, when it is an address of this site (`origin`): its path
 * `/<username>/docs/<name>` (or its `/embed`); anything else is undefined (404).
 */
export function oembedTarget(url: string, origin: string): OembedTarget | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.origin !== new URL(origin).origin || u.username || u.password) return undefined;
  const m = READER_PATH.exec(u.pathname);
  if (!m) return undefined;
  let username: string, name: string;
  try {
    username = decodeURIComponent(m[1]!);
    name = decodeURIComponent(m[2]!);
  } catch {
    return undefined;
  }
  const asked = u.searchParams.get("page") ?? /^#page=(\d+)$/.exec(u.hash)?.[1];
  const page = asked !== undefined && /^[1-9][0-9]{0,8}$/.test(asked) ? Number(asked) : undefined;
  return { username, name, page };
}

/** `maxwidth`/`maxheight`: a whole number of pixels, absent when not given; malformed is null (400). */
export function readMaxSize(value: string | undefined): number | undefined | null {
  if (value === undefined || value === "") return undefined;
  return /^[1-9][0-9]{0,5}$/.test(value) ? Number(value) : null;
}

export interface OembedAnswer {
  readonly fields: ReadonlyArray<readonly [string, string | number]>;
}

/** The answer's fields, in the specification's order; the iframe scaled down to fit maxwidth × maxheight. */
export function oembedAnswer(doc: DocumentRecord, origin: string, target: OembedTarget, max: { width?: number; height?: number }): OembedAnswer {
  const scale = Math.min(1, (max.width ?? Infinity) / OEMBED_SIZE.width, (max.height ?? Infinity) / OEMBED_SIZE.height);
  const width = Math.max(1, Math.floor(OEMBED_SIZE.width * scale));
  const height = Math.max(1, Math.floor(OEMBED_SIZE.height * scale));
  const page = target.page !== undefined ? Math.min(target.page, doc.pageCount) : undefined;
  const src = `${origin}${embedPath(doc)}${page !== undefined && page > 1 ? `?page=${page}` : ""}`;
  const iframe = `<iframe src="${escapeText(src)}" width="${width}" height="${height}" title="${escapeText(doc.title)}" style="border:0" allowfullscreen></iframe>`;
  const fields: Array<[string, string | number]> = [
    ["type", "rich"],
    ["version", "1.0"],
    ["title", doc.title],
    ["author_name", doc.username],
    ["author_url", origin + profilePath(doc.username)],
    ["provider_name", "Quire"],
    ["provider_url", origin + "/"],
    ["cache_age", 3600],
  ];
  // A thumbnail only when it fits the consumer's bounds too (the specification asks it of the resource).
  const thumbHeight = doc.coverWidth > 0 ? Math.round((THUMBNAIL_WIDTH * doc.coverHeight) / doc.coverWidth) : 0;
  // An explicit document's cover is shown to no one who has not agreed to see it (issue 26 item 3).
  if (!doc.explicit && thumbHeight > 0 && THUMBNAIL_WIDTH <= (max.width ?? Infinity) && thumbHeight <= (max.height ?? Infinity)) {
    fields.push(["thumbnail_url", origin + coverPath(doc, "medium")], ["thumbnail_width", THUMBNAIL_WIDTH], ["thumbnail_height", thumbHeight]);
  }
  fields.push(["html", iframe], ["width", width], ["height", height]);
  return { fields };
}

export function oembedJson(a: OembedAnswer): string {
  return JSON.stringify(Object.fromEntries(a.fields));
}

export function oembedXml(a: OembedAnswer): string {
  const body = a.fields.map(([k, v]) => `<${k}>${escapeText(String(v))}</${k}>`).join("");
  return `<?xml version="1.0" encoding="utf-8" standalone="yes"?>\n<oembed>${body}</oembed>\n`;
}

/** The discovery links of a reader page (JSON and XML), from its absolute address. */
export function oembedLinks(doc: Pick<DocumentRecord, "username" | "name">, origin: string): { json: string; xml: string } {
  const url = encodeURIComponent(origin + docPath(doc));
  return { json: `${origin}/oembed?url=${url}&format=json`, xml: `${origin}/oembed?url=${url}&format=xml` };
}

/**
 * The one HTML escaper: the pages' `html` tag (src/web/html.ts) and the embed code the API and the
 * app hand out (src/domain/embeds.ts) both write user strings through it.
 */
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

// C0/C1 controls (HTML parse errors, invisible) and the bidi embeddings, overrides and isolates, which
// would let a title reorder the text around it; tab and line feed stay.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069\uFFFE\uFFFF]/g;

/** A user string as inert text: controls dropped, markup characters escaped (valid in text and quoted attributes). */
export function escapeText(value: string): string {
  return value.replace(CONTROLS, "").replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

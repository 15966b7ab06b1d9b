import { escapeText } from "../domain/escape-text.ts";

/**
 * The one escaping helper of the public pages. Templates are written with the `html` tag: every
 * interpolated value is escaped unless it is already `Html` (made by `html` itself or `trusted`),
 * so a user-given string can only ever reach a page as text.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export { escapeText };

type Part = Html | string | number | boolean | null | undefined | readonly Part[];


function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeText(String(part));
}

/** Tagged template: literal parts are markup, every value is escaped (arrays are joined). */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i] as Part) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** Markup this program made itself (never user input). */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** A link target a reader may follow: only absolute http(s) addresses; anything else (javascript:, data:) is dropped. */
export function safeHttpUrl(value: string): string | undefined {
  try {
    const u = new URL(value);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** Text for XML (sitemap): same escaping, which XML accepts too. */
export const escapeXml = escapeText;

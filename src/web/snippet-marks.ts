import { html, type Html } from "./html.ts";
import { foldForSearch } from "./text-model.ts";

/**
 * A snippet with each place a query's word matches as <mark>: matched as the search matches
 * (case and accents folded, text-model.ts), marked on the snippet's own characters. reader.js
 * marks the same way for the results it draws.
 */
export function markTerms(snippet: string, query: string): Html {
  const terms = foldForSearch(query).split(/\s+/).filter(Boolean);
  const chars = Array.from(snippet);
  // Folding may turn one character into several (ligatures): each folded unit remembers its character.
  let folded = "";
  const owner: number[] = [];
  chars.forEach((c, i) => {
    const f = foldForSearch(c);
    folded += f;
    for (let k = 0; k < f.length; k++) owner.push(i);
  });
  const marked = new Array<boolean>(chars.length).fill(false);
  for (const t of terms) {
    for (let at = folded.indexOf(t); at !== -1; at = folded.indexOf(t, at + t.length)) {
      for (let k = at; k < at + t.length; k++) marked[owner[k]!] = true;
    }
  }
  const parts: Html[] = [];
  for (let i = 0; i < chars.length;) {
    let j = i;
    while (j < chars.length && marked[j] === marked[i]) j++;
    const text = chars.slice(i, j).join("");
    parts.push(marked[i] ? html`<mark>${text}</mark>` : html`${text}`);
    i = j;
  }
  return html`${parts}`;
}

import { isValidDocumentName } from "./values.ts";

/**
 * decisions §5: a name made from the title — lowercased, accents folded, every other character
 * to `-`, 3-50 characters. Undefined when the title gives nothing usable.
 */
export function nameBaseFromTitle(title: string): string | undefined {
  const folded = title
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9_.]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "");
  // room for a "-NN" suffix inside the 50-character limit
  const base = folded.slice(0, 46).replace(/[-.]+$/, "");
  if (base.length === 0) return undefined;
  return base.length >= 3 ? base : `${base}-doc`.slice(0, 46);
}

/** `base`, `base-2`, `base-3`, … : the candidates to try, in order. */
export function nameCandidates(base: string, count = 50): string[] {
  const out = [base];
  for (let i = 2; i <= count; i++) out.push(`${base}-${i}`);
  return out.filter(isValidDocumentName);
}

/**
 * Pairs of neighbouring words, read from tsvectors in their text form (`'card':4 'hous':2`): each
 * lexeme with the next one present and the distance between them (more than 1 where the
 * configuration left stop words out), as `"hous 2 card"`. A document's pairs come from its
 * pages' and fields' vectors, a phrase's from the query's vector in the same configuration, so
 * both name a phrase alike. Read here rather than in SQL: unnesting a book's positions and
 * ordering them in PostgreSQL cost 27 ms per 100 pages, against a few here.
 */

/** A lexeme quoted as tsvector's output writes it (`''` and `\` escapes), then its positions, if any. */
const ENTRY = /'((?:[^'\\]|''|\\.)*)'(?::([0-9A-D,]+))?/g;

/** The distinct pairs of each vector's neighbouring lexemes (never from one vector into the next). */
export function vectorPairs(vectors: readonly string[]): string[] {
  const pairs = new Set<string>();
  for (const vector of vectors) {
    const at = new Map<number, string[]>();
    for (const [, quoted, positions] of vector.matchAll(ENTRY)) {
      if (positions === undefined) continue;
      const lexeme = quoted!.replace(/''/g, "'").replace(/\\(.)/g, "$1");
      for (const p of positions.split(",")) {
        const pos = Number.parseInt(p, 10);
        const here = at.get(pos);
        if (here) here.push(lexeme);
        else at.set(pos, [lexeme]);
      }
    }
    const order = [...at.keys()].sort((a, b) => a - b);
    for (let i = 1; i < order.length; i++) {
      const gap = order[i]! - order[i - 1]!;
      for (const a of at.get(order[i - 1]!)!) for (const b of at.get(order[i]!)!) pairs.add(`${a} ${gap} ${b}`);
    }
  }
  return [...pairs];
}

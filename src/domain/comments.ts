import { randomUUID } from "node:crypto";
import { invalid, missing } from "./errors.ts";
import { formatDate, isXmlSafe } from "./values.ts";
import type { Resource } from "./resource.ts";

/**
 * Comments and ratings (decisions §16): the rules the reader's forms, the app and the v1
 * operations share. Comments are plain text: nothing here or anywhere after it is ever read as
 * markup, and links stay text.
 */

export const COMMENT_STATES = ["pending", "approved", "hidden"] as const;
export type CommentState = (typeof COMMENT_STATES)[number];

export function isCommentState(value: string): value is CommentState {
  return (COMMENT_STATES as readonly string[]).includes(value);
}

/** At most this many characters of text (decisions §16). */
export const COMMENT_MAX_TEXT = 2000;
/** A display name, not an identity: short, and never checked against anything. */
export const COMMENT_MAX_AUTHOR = 80;

/** A stored comment as every reader of it sees it. */
export interface CommentRecord {
  commentId: string;
  documentId: string;
  accountId: number;
  author: string;
  body: string;
  state: CommentState;
  createdAt: number;
  updatedAt: number;
}

/** A comment with the document it is on, as the app's queue and the API list it. */
export interface CommentWithDocument extends CommentRecord {
  documentName: string;
  documentTitle: string;
}

// C0 controls but tab and line feed, DEL, C1 controls, and the bidi overrides a name could use to
// turn the text around it: dropped, as the pages drop them (src/web/html.ts).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNWANTED = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

/** Plain text as stored: line ends made `\n`, controls dropped, outer blanks trimmed. */
export function plainText(value: string): string {
  return value.replace(/\r\n?/g, "\n").replace(UNWANTED, "").trim();
}

/** What went wrong with a reader's comment, in the words the reader page shows. */
export type CommentInputProblem = "author-missing" | "author-too-long" | "text-missing" | "text-too-long";

export const COMMENT_PROBLEM_TEXT: Record<CommentInputProblem, string> = {
  "author-missing": "Please give a name to show with your comment.",
  "author-too-long": `A name may have at most ${COMMENT_MAX_AUTHOR} characters.`,
  "text-missing": "Please write a comment.",
  "text-too-long": `A comment may have at most ${COMMENT_MAX_TEXT} characters.`,
};

/** A reader's name and text, checked: what is stored, or what is wrong with it (the first problem). */
export function checkCommentInput(
  authorRaw: string | undefined,
  textRaw: string | undefined,
): { ok: true; author: string; body: string } | { ok: false; problem: CommentInputProblem } {
  // A single line: a name never carries line ends.
  const author = plainText((authorRaw ?? "").replace(/\s+/g, " "));
  const body = plainText(textRaw ?? "");
  if (author === "") return { ok: false, problem: "author-missing" };
  if ([...author].length > COMMENT_MAX_AUTHOR) return { ok: false, problem: "author-too-long" };
  if (body === "") return { ok: false, problem: "text-missing" };
  if ([...body].length > COMMENT_MAX_TEXT) return { ok: false, problem: "text-too-long" };
  return { ok: true, author: xmlSafe(author), body: xmlSafe(body) };
}

/** The two non-characters XML refuses and lone surrogates: replaced rather than refused. */
function xmlSafe(value: string): string {
  const fixed = value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|[\uFFFE\uFFFF]/g, "\uFFFD");
  return isXmlSafe(fixed) ? fixed : fixed.replace(/[^\t\n\u0020-\uFFFD\uD800-\uDFFF]/g, "");
}

export function newCommentId(): string {
  return randomUUID();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `commentId` of the v1 operations: absent 200, not a comment id 201 (an unknown one is 201 too, decisions §9). */
export function parseCommentId(value: string | undefined): string {
  if (value === undefined) throw missing("commentId");
  const id = value.toLowerCase();
  if (!UUID_RE.test(id)) throw invalid("commentId");
  return id;
}

/** `state` of `svc.document_comment.update`. */
export function parseCommentState(value: string | undefined): CommentState {
  if (value === undefined) throw missing("state");
  if (!isCommentState(value)) throw invalid("state");
  return value;
}

/** A `comment` as the API answers it (and a `comment.created` delivery carries it). */
export function commentView(c: CommentWithDocument): Resource {
  return {
    tag: "comment",
    fields: [
      ["commentId", c.commentId],
      ["documentId", c.documentId],
      ["name", c.documentName],
      ["author", c.author],
      ["text", c.body],
      ["state", c.state],
      ["created", formatDate(c.createdAt)],
      ["updated", formatDate(c.updatedAt)],
    ],
  };
}

export const COMMENT_FIELDS = ["commentId", "documentId", "name", "author", "text", "state", "created", "updated"];

/** Counts of 1…5-star ratings, in that order. */
export type RatingCounts = readonly [number, number, number, number, number];

export const NO_RATINGS: RatingCounts = [0, 0, 0, 0, 0];

/** `rating` (the mean, one decimal, 0 when none) and `ratingDist` (`"n1,n2,n3,n4,n5"`) of decisions §16. */
export function ratingSummary(counts: RatingCounts): { rating: number; ratingDist: string; total: number } {
  const total = counts.reduce((a, b) => a + b, 0);
  const sum = counts.reduce((a, n, i) => a + n * (i + 1), 0);
  return { rating: total === 0 ? 0 : Math.round((sum / total) * 10) / 10, ratingDist: counts.join(","), total };
}

/** A reader's rating from a form: a whole number of stars, 1 to 5. */
export function parseStars(value: string | undefined): 1 | 2 | 3 | 4 | 5 | undefined {
  return value !== undefined && /^[1-5]$/.test(value.trim()) ? (Number(value.trim()) as 1 | 2 | 3 | 4 | 5) : undefined;
}

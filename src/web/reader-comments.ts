import { COMMENT_MAX_AUTHOR, COMMENT_MAX_TEXT, ratingSummary, type CommentRecord } from "../domain/comments.ts";
import { countOf } from "../domain/counts.ts";
import type { DocumentRecord } from "../domain/document.ts";
import { docPath } from "./document-paths.ts";
import { html, type Html } from "./html.ts";
import { pageLayout } from "./page-layout.ts";
import type { WebAssets } from "./web-assets.ts";

/**
 * Ratings and comments under the reader (decisions §16). Everything here works without script:
 * plain forms that POST and a paged list of links; `reader-feedback.js` only saves a reload.
 * Comments are text: every name and text goes through the `html` tag, and no link is made.
 */

/** Approved comments shown per page, newest first. */
export const COMMENTS_PAGE_SIZE = 10;

export const ratingPath = (doc: Pick<DocumentRecord, "username" | "name">) => `${docPath(doc)}/rating`;
export const commentsPath = (doc: Pick<DocumentRecord, "username" | "name">) => `${docPath(doc)}/comments`;

const STAR_WORDS = ["1 star", "2 stars", "3 stars", "4 stars", "5 stars"] as const;

/** "4.2 out of 5 from 7 ratings" (or "No ratings yet"). */
export function ratingText(doc: DocumentRecord): string {
  const { rating, total } = ratingSummary(doc.ratingCounts);
  return total === 0 ? "No ratings yet" : `${rating.toFixed(1)} out of 5 from ${countOf(total, "rating")}`;
}

/** Five stars as a radio group (one tab stop, arrows move, the legend names it), with a button to send. */
export function ratingForm(doc: DocumentRecord, embed: boolean): Html {
  const id = embed ? "rate-e" : "rate";
  return html`<form class="feedback-rating" id="rating" method="post" action="${ratingPath(doc)}" data-role="rating">
${embed && html`<input type="hidden" name="embed" value="1">`}
<fieldset>
<legend>Rate this document</legend>
<p class="rating-now" data-role="rating-now">${ratingText(doc)}</p>
<div class="stars">
${STAR_WORDS.map((word, i) => html`<input type="radio" id="${id}-${i + 1}" name="stars" value="${i + 1}" class="star-input"><label for="${id}-${i + 1}" class="star s${i + 1}"><span class="sr-only">${word}</span></label>`)}
</div>
<button type="submit">Rate</button>
<p class="feedback-status" data-role="rating-status" role="status"></p>
</fieldset>
</form>`;
}

function commentItem(c: CommentRecord): Html {
  const when = new Date(c.createdAt).toISOString();
  return html`<li class="comment" id="comment-${c.commentId}">
<p class="comment-meta"><span class="comment-author">${c.author}</span> <time datetime="${when}">${when.slice(0, 10)}</time></p>
<p class="comment-text">${c.body}</p>
</li>`;
}

/** What the form shows again after a refusal: the reader's words and what was wrong. */
export interface CommentFormState {
  author?: string;
  text?: string;
  error?: string;
}

export function commentForm(doc: DocumentRecord, state: CommentFormState = {}): Html {
  return html`<form class="comment-form" id="comment-form" method="post" action="${commentsPath(doc)}" data-role="comment-form" novalidate>
<h3>Add a comment</h3>
<p class="comment-note">Comments are plain text. The publisher may review them before they appear.</p>
${state.error && html`<p class="message error" role="alert" id="comment-error">${state.error}</p>`}
<p><label for="comment-author">Name shown with your comment</label>
<input id="comment-author" name="author" maxlength="${COMMENT_MAX_AUTHOR}" autocomplete="nickname" required value="${state.author ?? ""}"></p>
<p><label for="comment-text">Comment</label>
<textarea id="comment-text" name="text" rows="4" maxlength="${COMMENT_MAX_TEXT}" required aria-describedby="comment-limit">${state.text ?? ""}</textarea>
<span class="hint" id="comment-limit">At most ${COMMENT_MAX_TEXT} characters.</span></p>
<p class="hp" aria-hidden="true"><label for="comment-website">Leave this field empty</label>
<input id="comment-website" name="website" tabindex="-1" autocomplete="off"></p>
<p><button type="submit">Post comment</button></p>
<p class="feedback-status" data-role="comment-status" role="status"></p>
</form>`;
}

/** Approved comments, one page, newest first, with links to the other pages. */
export function commentList(doc: DocumentRecord, page: { totalCount: number; items: readonly CommentRecord[]; page: number }): Html {
  const pages = Math.max(1, Math.ceil(page.totalCount / COMMENTS_PAGE_SIZE));
  const link = (n: number) => `${commentsPath(doc)}?page=${n}#comments`;
  return html`<h2 id="comments-title">Comments <span class="comment-count">(${page.totalCount})</span></h2>
${page.items.length === 0
  ? html`<p class="no-comments">${page.totalCount === 0 ? "No comments yet." : "There are no comments on this page."}</p>`
  : html`<ol class="comment-list">${page.items.map(commentItem)}</ol>`}
${pages > 1 && html`<nav class="comment-pages" aria-label="Comment pages">
${page.page > 1 && html`<a href="${page.page === 2 ? `${docPath(doc)}#comments` : link(page.page - 1)}" rel="prev">Newer comments</a>`}
<span>Page ${page.page} of ${pages}</span>
${page.page < pages && html`<a href="${link(page.page + 1)}" rel="next">Older comments</a>`}
</nav>`}`;
}

/** The reader's section: the rating (when ratings are on) and the comments (when comments are on). */
export function readerFeedback(
  doc: DocumentRecord,
  assets: WebAssets,
  opts: { embed: boolean; comments?: { totalCount: number; items: readonly CommentRecord[] } },
): Html {
  const rating = doc.ratingsAllowed ? ratingForm(doc, opts.embed) : undefined;
  const comments = !opts.embed && doc.commentsAllowed && opts.comments
    ? html`<section class="comments" id="comments" aria-labelledby="comments-title">
${commentList(doc, { ...opts.comments, page: 1 })}
${commentForm(doc)}
</section>`
    : undefined;
  if (!rating && !comments) return html``;
  return html`<link rel="stylesheet" href="${assets.feedbackCss.url}">
<div class="feedback${opts.embed ? " feedback-embed" : ""}">${rating}${comments}</div>`;
}

/** A page of the comments on its own (`/comments?page=N`), and the answer to a form sent without script. */
export function commentsPage(
  doc: DocumentRecord,
  assets: WebAssets,
  v: { list?: { totalCount: number; items: readonly CommentRecord[]; page: number }; form?: CommentFormState; notice?: string; showForm: boolean },
): Html {
  return pageLayout(
    { title: `Comments — ${doc.title}`, noindex: true, lang: doc.language || "en" },
    assets,
    html`<main class="comments-page">
<p class="back"><a href="${docPath(doc)}">← Back to “${doc.title}”</a></p>
<h1>${doc.title}</h1>
${v.notice && html`<p class="message notice-ok" role="status">${v.notice}</p>`}
<link rel="stylesheet" href="${assets.feedbackCss.url}">
${(v.list || v.showForm) && html`<section class="comments" id="comments" aria-labelledby="comments-title">
${v.list ? commentList(doc, v.list) : html`<h2 id="comments-title" class="sr-only">Comments</h2>`}
${v.showForm && commentForm(doc, v.form)}
</section>`}
</main>`,
  );
}

/** The answer to a rating sent without script. */
export function ratedPage(doc: DocumentRecord, assets: WebAssets, v: { stars?: number; notice?: string; embed: boolean }): Html {
  const back = `${docPath(doc)}${v.embed ? "/embed" : ""}`;
  return pageLayout(
    { title: `Rating — ${doc.title}`, noindex: true, lang: doc.language || "en" },
    assets,
    html`<main class="state-page">
<h1>${doc.title}</h1>
<p role="status">${v.notice ?? `Thank you: you rated this document ${STAR_WORDS[(v.stars ?? 1) - 1]}. ${ratingText(doc)}.`}</p>
<p><a href="${back}">Back to the document</a></p>
</main>`,
  );
}

/** A form that could not be taken for a reason of our own (or an unreadable request). */
export function errorPage(assets: WebAssets, message: string): Html {
  return pageLayout(
    { title: "Not sent", noindex: true },
    assets,
    html`<main class="state-page"><h1>Not sent</h1><p role="alert">${message}</p></main>`,
  );
}

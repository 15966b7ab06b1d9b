import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isCommentState, type CommentState, type CommentWithDocument } from "../../domain/comments.ts";
import { countOf } from "../../domain/counts.ts";
import { docPath } from "../document-paths.ts";
import { html, type Html } from "../html.ts";
import { accountOf, field, type AppContext } from "./app-context.ts";
import { noticeBox } from "./app-errors.ts";
import { APP_BASE, sendAppPage } from "./app-layout.ts";
import { shortDate } from "./app-words.ts";

/**
 * Moderation (decisions §16): the account's comments by state (the pending queue first), approved,
 * hidden or deleted several at once, and the account's choice to publish comments at once. The
 * same store calls as svc.document_comments.list / document_comment.update / .delete.
 */

export const COMMENTS_APP_PAGE_SIZE = 25;
/** Ids taken from one form at most (a page shows fewer). */
const MAX_IDS = 200;

const TABS: ReadonlyArray<readonly [CommentState, string]> = [["pending", "Waiting for approval"], ["approved", "Approved"], ["hidden", "Hidden"]];
const ACTIONS = { approve: "approved", hide: "hidden" } as const;
const DONE_WORDS: Record<string, string> = { approve: "approved", hide: "hidden", delete: "deleted" };

declare module "fastify" {
  interface FastifyRequest {
    /** Comments of the signed-in account waiting for approval (the navigation shows the count). */
    appPendingComments?: number;
  }
}

/** A preHandler of the signed-in pages: the pending count the navigation shows, one indexed count. */
export function countPendingComments(ctx: AppContext) {
  return async (req: FastifyRequest) => {
    if (req.method !== "GET" || !req.appAccount) return;
    req.appPendingComments = await ctx.store.comments.pendingCount(req.appAccount.id);
  };
}

/** Every value of a repeated form field (checkboxes named alike). */
function allValues(body: unknown, name: string): string[] {
  if (body === null || typeof body !== "object" || !Object.hasOwn(body, name)) return [];
  const v = (body as Record<string, unknown>)[name];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string").slice(0, MAX_IDS);
}

function commentRow(c: CommentWithDocument, username: string): Html {
  return html`<li class="comment-item">
<input type="checkbox" name="ids" value="${c.commentId}" id="c-${c.commentId}">
<div class="comment-body">
<label for="c-${c.commentId}"><span class="comment-author">${c.author}</span> on <span class="comment-doc">${c.documentTitle}</span></label>
<p class="comment-text">${c.body}</p>
<p class="comment-meta"><time datetime="${new Date(c.createdAt).toISOString()}">${shortDate(c.createdAt)}</time> · <a href="${docPath({ username, name: c.documentName })}">${c.documentName}</a></p>
</div>
</li>`;
}

function commentsBody(
  csrf: string,
  v: { state: CommentState; page: number; totalCount: number; items: readonly CommentWithDocument[]; atOnce: boolean; notice?: string; username: string },
): Html {
  const pages = Math.max(1, Math.ceil(v.totalCount / COMMENTS_APP_PAGE_SIZE));
  const href = (state: CommentState, page = 1) => `${APP_BASE}/comments?state=${state}${page > 1 ? `&page=${page}` : ""}`;
  return html`<h1>Comments</h1>
${noticeBox(v.notice)}
<nav class="comment-tabs" aria-label="Comments by state"><ul>
${TABS.map(([s, label]) => html`<li><a href="${href(s)}"${s === v.state ? html` aria-current="page"` : ""}>${label}</a></li>`)}
</ul></nav>
<form method="post" action="${APP_BASE}/comments" class="comment-queue">
<input type="hidden" name="_csrf" value="${csrf}">
<input type="hidden" name="state" value="${v.state}">
<h2 id="queue-title">${TABS.find(([s]) => s === v.state)![1]}: ${countOf(v.totalCount, "comment")}</h2>
${v.items.length === 0
  ? html`<p>There are no comments here.</p>`
  : html`<fieldset class="comment-actions"><legend class="sr-only">With the selected comments</legend>
${v.state !== "approved" && html`<button type="submit" name="do" value="approve" class="primary">Approve selected</button>`}
${v.state !== "hidden" && html`<button type="submit" name="do" value="hide">Hide selected</button>`}
<button type="submit" name="do" value="delete" class="danger">Delete selected</button>
</fieldset>
<ul class="comment-items" aria-labelledby="queue-title">${v.items.map((c) => commentRow(c, v.username))}</ul>`}
</form>
${pages > 1 && html`<nav class="pager" aria-label="Pages">
${v.page > 1 && html`<a href="${href(v.state, v.page - 1)}" rel="prev">Previous page</a>`}
<span>Page ${Math.min(v.page, pages)} of ${pages}</span>
${v.page < pages && html`<a href="${href(v.state, v.page + 1)}" rel="next">Next page</a>`}
</nav>`}
<form method="post" action="${APP_BASE}/comments/settings" class="stack comment-settings">
<input type="hidden" name="_csrf" value="${csrf}">
<h2>New comments</h2>
<p><input type="checkbox" id="publish-at-once" name="publishAtOnce" value="1"${v.atOnce ? html` checked` : ""}>
<label for="publish-at-once">Publish readers' comments at once, without waiting for my approval</label></p>
<button type="submit">Save</button>
</form>`;
}

export function registerCommentsPage(scope: FastifyInstance, ctx: AppContext): void {
  const show = async (req: FastifyRequest, reply: FastifyReply) => {
    const account = accountOf(req);
    const stateText = field(req.query, "state") ?? "pending";
    const state: CommentState = isCommentState(stateText) ? stateText : "pending";
    const pageText = field(req.query, "page") ?? "";
    const page = /^[1-9][0-9]{0,6}$/.test(pageText) ? Number(pageText) : 1;
    const { totalCount, items } = await ctx.store.comments.list({
      accountId: account.id, states: [state], order: state === "pending" ? "asc" : "desc",
      startIndex: (page - 1) * COMMENTS_APP_PAGE_SIZE, pageSize: COMMENTS_APP_PAGE_SIZE,
    });
    const atOnce = await ctx.store.accounts.publishesCommentsAtOnce(account.id);
    const done = field(req.query, "done");
    const n = Number(field(req.query, "n") ?? "0");
    const notice = done === "settings"
      ? "Saved."
      : done !== undefined && DONE_WORDS[done] && Number.isSafeInteger(n)
        ? `${countOf(n, "comment")} ${DONE_WORDS[done]}.`
        : undefined;
    return sendAppPage(ctx, req, reply, { title: "Comments", section: "comments" }, (csrf) =>
      commentsBody(csrf, { state, page, totalCount, items, atOnce, notice, username: account.username }));
  };

  scope.get("/comments", show);

  scope.post("/comments", async (req, reply) => {
    const account = accountOf(req);
    const ids = allValues(req.body, "ids").map((id) => id.toLowerCase());
    const action = field(req.body, "do");
    const back = field(req.body, "state");
    const state = back !== undefined && isCommentState(back) ? back : "pending";
    if (action !== "delete" && action !== "approve" && action !== "hide") return reply.code(400).send("Unknown action");
    const n = action === "delete"
      ? await ctx.store.comments.delete(account.id, ids)
      : (await ctx.store.comments.setState(account.id, ids, ACTIONS[action], Date.now())).length;
    return reply.redirect(`${APP_BASE}/comments?state=${state}&done=${action}&n=${n}`, 303);
  });

  scope.post("/comments/settings", async (req, reply) => {
    const account = accountOf(req);
    await ctx.store.accounts.setPublishesCommentsAtOnce(account.id, field(req.body, "publishAtOnce") === "1");
    return reply.redirect(`${APP_BASE}/comments?done=settings`, 303);
  });
}

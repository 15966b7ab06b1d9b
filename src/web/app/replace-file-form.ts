import { rm } from "node:fs/promises";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DocumentRecord } from "../../domain/document.ts";
import { replaceRoute, replacementStatus, type Replacement } from "../../domain/document-replacement.ts";
import { missing, QuireError } from "../../domain/errors.ts";
import { diskFullRefusalOf } from "../../uploads/disk-guard.ts";
import { replaceDocumentFile } from "../../uploads/replace-file.ts";
import { readUpload, type SpooledFile } from "../../uploads/upload-reader.ts";
import { fileSource } from "../../uploads/upload-sources.ts";
import { html, type Html } from "../html.ts";
import { field, type AppContext } from "./app-context.ts";
import { describeFailure, errorBox } from "./app-errors.ts";
import { APP_BASE } from "./app-layout.ts";
import { formatSize } from "./upload-page.ts";

/**
 * The edit page's "Replace file" form (issue 26 item 5; src/domain/document-replacement.ts): a new
 * file for the document, keeping its address, embeds, statistics and folders. A published document
 * keeps its pages until the new ones are ready; a failed one converts again. A plain form (it works
 * without script): its multipart body is read by the API's own streamed reader and limits, so its
 * CSRF token rides in the address (`_csrf`), the one place such a body can carry it before it is read.
 */

export const REPLACE_NOTICES: Readonly<Record<string, string>> = {
  replacing: "The new file is being converted. Readers see the current pages until the new ones are ready.",
  restarted: "The new file is being converted.",
};

/** The form, with what became of the last replacement (converting, or why it failed). */
export function replaceFileSection(doc: DocumentRecord, replacement: Replacement | undefined, csrf: string, maxBytes: number, error?: string): Html {
  const status = replacementStatus(replacement);
  const converting = replaceRoute(doc) === "converting";
  const action = `${APP_BASE}/documents/${doc.documentId}/replace?_csrf=${encodeURIComponent(csrf)}`;
  return html`<fieldset class="replace-file" id="replace-file">
<legend>Replace file</legend>
${status !== undefined && html`<p class="message ${replacement?.state === "F" ? "error" : "notice"}" role="status" data-replacement-state="${replacement?.state ?? ""}">${status}</p>`}
${errorBox(error)}
${converting
    ? html`<p class="hint">This document is still being processed. A new file can be given once it is ready.</p>`
    : html`<p class="hint">${doc.state === "A" ? "The address, embeds, statistics, comments and folders stay. Readers see the current pages until the new file is converted." : "The document is converted again from the new file, at the same address."} Up to ${formatSize(maxBytes)}.</p>
<form method="post" enctype="multipart/form-data" action="${action}" class="stack">
<label for="replace-file-input">New file</label>
<input id="replace-file-input" name="file" type="file" required>
<button type="submit">Replace file</button>
</form>`}
</fieldset>`;
}

type Params = { Params: { documentId: string } };

export interface ReplaceFormDeps {
  ownDocument(req: FastifyRequest<Params>): Promise<DocumentRecord | undefined>;
  /** The edit page again, with this error beside the form. */
  showError(req: FastifyRequest<Params>, reply: FastifyReply, doc: DocumentRecord, error: string, status: number): Promise<FastifyReply>;
  notFound(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

export function registerReplaceFile(scope: FastifyInstance, ctx: AppContext, page: ReplaceFormDeps): void {
  const maxBytes = ctx.config.maxUploadBytes;
  scope.post<Params>(
    "/documents/:documentId/replace",
    {
      // The body is not read before the CSRF check: the token comes from the address (see above).
      preValidation: (req, _reply, done) => {
        const token = field(req.query, "_csrf");
        if (token !== undefined && req.body === undefined) req.body = { _csrf: token };
        done();
      },
    },
    async (req, reply) => {
      const doc = await page.ownDocument(req);
      if (!doc) return page.notFound(req, reply);
      let file: SpooledFile | undefined;
      try {
        file = await readUpload(req.raw, { add: () => {} }, {
          maxBytes,
          tempPath: () => ctx.spool.tempPath(),
          beforeFile: async () => {},
          onLimit: async () => new QuireError("205", "file"),
        });
        if (file === undefined) throw missing("file");
        const source = await fileSource(file);
        const outcome = await replaceDocumentFile(ctx, {
          doc, source, spooledPath: file.path, now: Date.now(), requestId: req.id,
        });
        if (!outcome.ok) throw new QuireError(outcome.reason === "not-found" ? "300" : "307");
        return reply.redirect(`${APP_BASE}/documents/${doc.documentId}?done=${outcome.route === "beside" ? "replacing" : "restarted"}#replace-file`, 303);
      } catch (caught) {
        const diskFull = diskFullRefusalOf(caught);
        const err = diskFull ?? caught;
        if (!(err instanceof QuireError)) {
          req.log.error({ err }, "replacing a document's file from the app failed");
          if (req.raw.socket?.destroyed ?? true) return reply;
        }
        if (!req.raw.complete) reply.header("connection", "close");
        const text = err instanceof QuireError && err.code === "205"
          ? `The file is larger than the ${formatSize(maxBytes)} this server accepts.`
          : describeFailure(err).text;
        const status = diskFull ? 503 : err instanceof QuireError ? (err.code === "205" ? 413 : err.code === "300" ? 404 : 400) : 500;
        return page.showError(req, reply, doc, text, status);
      } finally {
        if (file) await rm(file.path, { force: true });
      }
    },
  );
}

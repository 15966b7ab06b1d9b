import type { FastifyInstance } from "fastify";
import type { AppContext } from "./app-context.ts";
import { registerDocumentPage } from "./document-page.ts";
import { registerDocumentsPage } from "./documents-page.ts";
import { registerKeysPage } from "./keys-page.ts";
import { registerUploadPage } from "./upload-page.ts";
import { registerFoldersPage } from "./folders-page.ts";
import { registerSharePage } from "./share-page.ts";
import { registerCommentsPage } from "./comments-page.ts";
import { registerStatisticsPage } from "./statistics-page.ts";
import { registerWebhooksPage } from "./webhooks-page.ts";

/**
 * A page module: registers its routes (paths relative to /app) on the signed-in scope, where the
 * session guard has run (accountOf(req) is the account) and every POST has passed the CSRF check.
 */
export type AppPageModule = (scope: FastifyInstance, ctx: AppContext) => void | Promise<void>;

/** The signed-in pages of the app, one line each (see README.md beside this file). */
export const SIGNED_IN_PAGES: readonly AppPageModule[] = [
  registerDocumentsPage,
  registerDocumentPage,
  registerKeysPage,
  registerUploadPage,
  registerFoldersPage,
  registerSharePage,
  registerCommentsPage,
  registerStatisticsPage,
  registerWebhooksPage,
];

import { json, type V2Operation } from "../v2-operation.ts";

/** `GET /v2/user/features`: what this server allows, from its configuration; no plan limits on documents. */
export const userFeatures: V2Operation = {
  method: "GET",
  url: "/user/features",
  schema: {},
  handler: async (ctx) =>
    json({
      fullscreenShare: true,
      download: true,
      detectedLinks: false,
      publishedDocumentLimitLeft: "unlimited",
      unlistedDocumentLimitLeft: "unlimited",
      sizeUploadLimitMb: Math.floor(ctx.deps.config.maxUploadBytes / (1024 * 1024)),
      pageUploadLimit: ctx.deps.config.maxPages,
      publishedDocumentLimit: "unlimited",
      unlistedDocumentLimit: "unlimited",
    }),
};

import type { DocumentRecord } from "./document.ts";
import { formatDate } from "./values.ts";
import type { Resource } from "./resource.ts";
import { NO_RATINGS, ratingSummary } from "./comments.ts";

/** The full document record as answered (interface §2.1, decisions §5), in a fixed field order. */
export function documentView(d: DocumentRecord): Resource {
  return {
    tag: "document",
    fields: [
      ["username", d.username],
      ["name", d.name],
      ["documentId", d.documentId],
      ["revisionId", d.revisionId],
      ["publicationId", d.publicationId],
      ["title", d.title],
      ["access", d.access],
      ["state", d.state],
      ["errorCode", d.errorCode],
      ["errorMessage", d.errorMessage],
      ["category", d.category],
      ["type", d.type],
      ["orgDocType", d.orgDocType],
      ["orgDocName", d.orgDocName],
      ["origin", d.origin],
      ["language", d.language],
      ["pageCount", d.pageCount],
      ["publishDate", formatDate(d.publishDate)],
      ["description", d.description],
      ["tags", { list: d.tags, itemTag: "tag", itemAttr: "value" }],
      ["folders", { list: d.folderIds, itemTag: "folder", itemAttr: "id" }],
      ["ep", Math.floor(d.updatedAt / 1000)],
      ["commentsAllowed", d.commentsAllowed],
      ["ratingsAllowed", d.ratingsAllowed],
      ["downloadable", d.downloadable],
      ["explicit", d.explicit],
      ["infoLink", d.infoLink],
      ["soundUrl", d.soundUrl],
      ["coverWidth", d.coverWidth],
      ["coverHeight", d.coverHeight],
      // decisions §16; hidden (0, no counts) while ratings are turned off, shown again when on.
      ["rating", d.ratingsAllowed ? ratingSummary(d.ratingCounts).rating : 0],
      ["ratingDist", (d.ratingsAllowed ? d.ratingCounts : NO_RATINGS).join(",")],
    ],
  };
}

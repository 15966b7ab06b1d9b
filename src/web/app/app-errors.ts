import { MAX_DESCRIPTION_LENGTH, MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH } from "../../domain/document-options.ts";
import { QuireError, type ErrorCode } from "../../domain/errors.ts";
import { html, type Html } from "../html.ts";

/** How a field of the API is called on the app's pages. */
const FIELD_NAMES: Readonly<Record<string, string>> = {
  name: "document", newName: "address name", title: "title", description: "description", tags: "tags",
  language: "language", category: "category", type: "type", publishDate: "publish date", access: "access",
  commentsAllowed: "comments", ratingsAllowed: "ratings", downloadable: "download", explicit: "explicit",
  infoLink: "info link", soundUrl: "sound address", file: "file", slurpUrl: "web address", names: "documents",
  folderId: "folder", folderIds: "folders", folderName: "folder name", folderDescription: "folder description",
  bookmarkId: "bookmark", bookmarkIds: "bookmarks", documentId: "document", embedId: "embed", page: "page",
  readerStartPage: "start page", width: "width", height: "height", documentUsername: "owner",
};

/** What a malformed value (201) of a field should look like, in words. */
const FIELD_RULES: Readonly<Record<string, string>> = {
  title: `A title may have at most ${MAX_TITLE_LENGTH} characters, and no control characters.`,
  description: `A description may have at most ${MAX_DESCRIPTION_LENGTH} characters, and no control characters.`,
  tags: `Give at most ${MAX_TAGS} tags, separated by commas, each at most ${MAX_TAG_LENGTH} characters.`,
  newName: "An address name needs 3 to 50 characters among a–z, 0–9, _ . - and must not be the name of another of your documents.",
  name: "This document no longer exists.",
  language: "Choose a language from the list.",
  category: "Choose a category from the list.",
  type: "Choose a type from the list.",
  publishDate: "Give a date such as 2024-05-31.",
  access: "Choose public or private.",
  infoLink: "Give a full web address starting with http:// or https:// (at most 2048 characters).",
  soundUrl: "Give a full web address starting with http:// or https:// whose path ends in .mp3 or .m3u.",
  slurpUrl: "Give a full web address starting with http:// or https:// (at most 2048 characters).",
  folderName: "A folder name needs 1 to 100 characters.",
  folderDescription: "A folder description may have at most 1000 characters.",
  folderIds: "One of the chosen folders no longer exists.",
  file: "This file is not in a format Quire can publish.",
  page: "Give a page number of the document.",
  readerStartPage: "Give a page number of the document.",
};

const CODE_TEXT: Partial<Record<ErrorCode, string>> = {
  "012": "Too many requests at once. Wait a moment and try again.",
  "090": "This embed no longer exists.",
  "205": "The file is larger than this server accepts.",
  "261": "You already have a folder with this name.",
  "300": "This document no longer exists. It may have been deleted meanwhile.",
  "307": "This document is still being processed. Try again when it is ready.",
  "308": "This document could not be published, so this cannot be done with it.",
  "311": "That page is beyond the document's last page.",
  "500": "Something went wrong on our side, and nothing was changed. Please try again.",
};

/**
 * The API's error (src/domain/errors.ts) in words for people: the same rule that refused the API
 * request refuses the form, and this says which field and what it should hold.
 */
export function errorText(err: QuireError): string {
  const fieldName = err.field === undefined ? undefined : (FIELD_NAMES[err.field] ?? err.field);
  if (err.code === "200") return fieldName ? `Please fill in the ${fieldName}.` : "Something required is missing.";
  if (err.code === "201") {
    const rule = err.field === undefined ? undefined : FIELD_RULES[err.field];
    return rule ?? (fieldName ? `The ${fieldName} is not valid.` : "Something in the form is not valid.");
  }
  return CODE_TEXT[err.code] ?? `${err.message}.`;
}

/** Any failure as words: a QuireError as above, anything else as the API's 500 (its details go to the log only). */
export function describeFailure(err: unknown): { text: string; field: string | undefined } {
  if (err instanceof QuireError) return { text: errorText(err), field: err.field };
  return { text: errorText(new QuireError("500")), field: undefined };
}

/** A message box for the top of a form; `role="alert"` so screen readers say it at once. */
export function errorBox(text: string | undefined): Html {
  return text ? html`<p class="message error" role="alert">${text}</p>` : html``;
}

/** A confirmation after a change. */
export function noticeBox(text: string | undefined): Html {
  return text ? html`<p class="message notice" role="status">${text}</p>` : html``;
}

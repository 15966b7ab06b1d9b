import type { DocumentRecord } from "../domain/document.ts";
import { docPath } from "./document-paths.ts";

/** Thrown by findDoc at a document's old name: the address is answered with a redirect to the new one. */
export class MovedDocument extends Error {
  constructor(readonly doc: DocumentRecord) {
    super("the document has another name now");
  }
}

/** `url` (`/<username>/docs/<old name>/rest?query`) with the document's name in place of the old one. */
export function renamedAddress(url: string, doc: DocumentRecord): string {
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const rest = path.split("/").slice(4).join("/");
  return `${docPath(doc)}${rest === "" ? "" : `/${rest}`}${q === -1 ? "" : url.slice(q)}`;
}

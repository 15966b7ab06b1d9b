/** The document view is the domain's (src/domain/document-view.ts): webhook deliveries carry it too. */
export { documentView } from "../domain/document-view.ts";

import type { ActionHandler } from "./action.ts";
import { documentDelete } from "./document-delete.ts";
import { documentUpdate } from "./document-update.ts";
import { documentsList } from "./documents-list.ts";
import { documentsSearch } from "./documents-search.ts";
import { documentsStats } from "./documents-stats.ts";

/** The operations of this group, by name without prefix (registered in index.ts). */
export const DOCUMENT_ACTIONS: ReadonlyArray<readonly [string, ActionHandler]> = [
  ["documents.list", documentsList],
  ["documents.search", documentsSearch],
  ["documents.stats", documentsStats],
  ["document.update", documentUpdate],
  ["document.delete", documentDelete],
];

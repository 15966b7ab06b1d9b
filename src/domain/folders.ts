import { MAX_DESCRIPTION_LENGTH, text, type ParamGetter } from "./document-options.ts";

export const MAX_FOLDER_NAME_LENGTH = 100;

/**
 * `folderName` and `folderDescription` (decisions §7) as sent, undefined when absent; 201 on the
 * first malformed one. The API's folder operations and the app's folder forms read them here.
 */
export function readFolderFields(get: ParamGetter): { name: string | undefined; description: string | undefined } {
  const name = text(get, "folderName", MAX_FOLDER_NAME_LENGTH);
  const description = text(get, "folderDescription", MAX_DESCRIPTION_LENGTH);
  return { name, description };
}

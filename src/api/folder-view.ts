import { formatDate } from "../domain/values.ts";
import type { FolderRecord } from "../store/folders.ts";
import type { Resource } from "./payload.ts";

/** The fields a folder answers, in order (decisions §7); also the names `responseParams` accepts. */
export const FOLDER_FIELDS = ["folderId", "username", "name", "description", "items", "created", "ep"] as const;

export function folderView(f: FolderRecord): Resource {
  return {
    tag: "folder",
    fields: [
      ["folderId", f.folderId],
      ["username", f.username],
      ["name", f.name],
      ["description", f.description],
      ["items", f.items],
      ["created", formatDate(f.createdAt)],
      ["ep", Math.floor(f.updatedAt / 1000)],
    ],
  };
}

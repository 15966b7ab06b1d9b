import type { FolderRecord } from "../../store/folders.ts";
import { notFound, type V2Context } from "./v2-operation.ts";
import { stackView } from "./v2-views.ts";

export const STACK_ACCESS = ["PUBLIC", "UNLISTED"] as const;

/** The caller's folder by id (a stack); another account's, or none: 404. */
export async function ownStack(ctx: V2Context, stackId: string): Promise<FolderRecord> {
  const folder = await ctx.deps.store.folders.get(ctx.caller.accountId, stackId);
  if (!folder) throw notFound();
  return folder;
}

export async function stackAnswer(ctx: V2Context, folder: FolderRecord): Promise<Record<string, unknown>> {
  const types = await ctx.deps.store.documentV2.stackAccessTypes(ctx.caller.accountId);
  return stackView(folder, types.get(folder.folderId));
}

/** Stack fields after their schema; `title` is the folder's name, with v1's folder rules. */
export const stackFields = {
  title: { type: "string", minLength: 1, maxLength: 100 },
  description: { type: "string", maxLength: 1000 },
  accessType: { type: "string", enum: STACK_ACCESS },
} as const;

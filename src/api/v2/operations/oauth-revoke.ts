import { json, type V2Operation } from "../v2-operation.ts";

/** `DELETE /v2/oauth/access`: revokes the token this request was made with. */
export const oauthRevoke: V2Operation = {
  method: "DELETE",
  url: "/oauth/access",
  schema: {},
  async handler(ctx) {
    await ctx.deps.store.apiTokens.revokeHash(ctx.caller.tokenHash);
    return json({});
  },
};

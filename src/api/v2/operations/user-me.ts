import { json, type V2Operation } from "../v2-operation.ts";

/** `GET /v2/user/me`: the account (no teams in Quire; no profile images). */
export const userMe: V2Operation = {
  method: "GET",
  url: "/user/me",
  schema: {},
  handler: async (ctx) =>
    json({
      userId: ctx.caller.accountId, username: ctx.caller.username, displayName: ctx.caller.username,
      ownerId: ctx.caller.accountId, ownerName: ctx.caller.username, isTeams: false, profileImages: {},
    }),
};

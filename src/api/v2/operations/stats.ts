import { V2Error, type V2Operation } from "../v2-operation.ts";

/**
 * `GET /v2/stats`: not answered until Quire counts readership (decisions §15): a 501 that says so,
 * never made-up zeros.
 */
export const stats: V2Operation = {
  method: "GET",
  url: "/stats",
  schema: {},
  handler: async () => {
    throw new V2Error(501, "Readership statistics are not available on this server yet");
  },
};

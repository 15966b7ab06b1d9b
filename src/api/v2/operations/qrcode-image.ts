import { notFound, type V2Operation } from "../v2-operation.ts";
import { qrCodeKey, readQrCodeToken } from "../v2-qrcode.ts";

/** `GET /v2/qrcodes/qr.png|svg?t=<signed>`: the QR code `qrcode` answered; no bearer token needed (the address is signed), 404 once expired. */
export const qrcodeImage: V2Operation = {
  method: "GET",
  url: "/qrcodes/:file",
  public: true,
  schema: {
    params: { type: "object", properties: { file: { type: "string", enum: ["qr.png", "qr.svg"] } }, required: ["file"] },
    querystring: { type: "object", properties: { t: { type: "string", maxLength: 5000 } } },
  },
  async handler(ctx) {
    const token = typeof ctx.query.t === "string" ? ctx.query.t : "";
    const url = readQrCodeToken(qrCodeKey(await ctx.deps.store.appSessions.cookieSecret()), token, ctx.now);
    if (url === undefined) throw notFound();
    // Loaded on the first QR code asked for: its forty modules are no part of any other request,
    // and every process that loads the API (servers, test files) paid for them at start.
    const { default: QRCode } = await import("qrcode");
    if (ctx.params.file === "qr.svg") return { bytes: await QRCode.toString(url, { type: "svg", errorCorrectionLevel: "M" }), type: "image/svg+xml" };
    return { bytes: await QRCode.toBuffer(url, { type: "png", errorCorrectionLevel: "M", width: 512 }), type: "image/png" };
  },
};

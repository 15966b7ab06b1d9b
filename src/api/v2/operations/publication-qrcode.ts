import { slugParams } from "../v2-schemas.ts";
import { json, type V2Operation } from "../v2-operation.ts";
import { ownPublication } from "../v2-documents.ts";
import { fullscreenSettings, fullscreenUrl } from "../v2-share.ts";
import { publicPath } from "../v2-views.ts";
import { QR_CODE_TTL_MS, qrCodeKey, qrCodeToken } from "../v2-qrcode.ts";

/**
 * `POST /v2/publications/{slug}/qrcode`: the address of a PNG or SVG QR code (valid 7 days) of the
 * reader, or of the fullscreen share when settings are given (`fullscreenSettings`, or the C#
 * client's `fullScreenSettings`).
 */
export const publicationQrcode: V2Operation = {
  method: "POST",
  url: "/publications/:slug/qrcode",
  schema: {
    params: slugParams,
    body: {
      type: "object",
      properties: { format: { type: "string", enum: ["PNG", "SVG", "png", "svg"], default: "PNG" }, fullscreenSettings, fullScreenSettings: fullscreenSettings },
    },
  },
  async handler(ctx) {
    const doc = await ownPublication(ctx, ctx.params.slug!);
    const settings = (ctx.body.fullscreenSettings ?? ctx.body.fullScreenSettings) as Record<string, unknown> | undefined;
    const pointedUrl = settings !== undefined ? fullscreenUrl(ctx.origin, doc, settings) : `${ctx.origin}${publicPath(doc)}`;
    const ext = String(ctx.body.format).toLowerCase();
    const key = qrCodeKey(await ctx.deps.store.appSessions.cookieSecret());
    const token = qrCodeToken(key, pointedUrl, ctx.now + QR_CODE_TTL_MS);
    return json({ qrCodeUrl: `${ctx.origin}/v2/qrcodes/qr.${ext}?t=${token}`, pointedUrl });
  },
};

import type { V2Operation } from "./v2-operation.ts";
import { draftCreate } from "./operations/draft-create.ts";
import { draftDelete } from "./operations/draft-delete.ts";
import { draftGet } from "./operations/draft-get.ts";
import { draftPublish } from "./operations/draft-publish.ts";
import { draftUpdate } from "./operations/draft-update.ts";
import { draftUpload } from "./operations/draft-upload.ts";
import { draftsList } from "./operations/drafts-list.ts";
import { oauthRevoke } from "./operations/oauth-revoke.ts";
import { publicationAssets } from "./operations/publication-assets.ts";
import { publicationDelete } from "./operations/publication-delete.ts";
import { publicationEmbed } from "./operations/publication-embed.ts";
import { publicationFullscreen } from "./operations/publication-fullscreen.ts";
import { publicationGet } from "./operations/publication-get.ts";
import { publicationQrcode } from "./operations/publication-qrcode.ts";
import { publicationReader } from "./operations/publication-reader.ts";
import { publicationsList } from "./operations/publications-list.ts";
import { qrcodeImage } from "./operations/qrcode-image.ts";
import { stackCreate } from "./operations/stack-create.ts";
import { stackDelete } from "./operations/stack-delete.ts";
import { stackGet } from "./operations/stack-get.ts";
import { stackItemAdd } from "./operations/stack-item-add.ts";
import { stackItemDelete } from "./operations/stack-item-delete.ts";
import { stackItems } from "./operations/stack-items.ts";
import { stackUpdate } from "./operations/stack-update.ts";
import { stacksList } from "./operations/stacks-list.ts";
import { stats } from "./operations/stats.ts";
import { userFeatures } from "./operations/user-features.ts";
import { userMe } from "./operations/user-me.ts";

/** Every v2 operation the real clients call (research §2: 27), and the QR code image the `qrcode` answer points at. */
export const V2_OPERATIONS: readonly V2Operation[] = [
  draftsList, draftCreate, draftGet, draftUpdate, draftDelete, draftUpload, draftPublish,
  publicationsList, publicationGet, publicationDelete, publicationAssets, publicationFullscreen, publicationReader, publicationQrcode, publicationEmbed,
  stacksList, stackCreate, stackGet, stackUpdate, stackDelete, stackItems, stackItemAdd, stackItemDelete,
  userMe, userFeatures, stats, oauthRevoke,
  qrcodeImage,
];

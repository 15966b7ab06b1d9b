/**
 * What a published page is as an image: its widths, its format, the covers' widths. One place for
 * the pipeline that renders them, the pages that show them and the tests that check them.
 */

/** Pixel widths of every page: the thumbnail strip and the reading size. */
export const PAGE_WIDTHS = { thumb: 200, read: 1200 } as const;
/** Pixel widths of the three covers (page 1). */
export const COVER_WIDTHS = { small: 150, medium: 300, large: 600 } as const;

export const IMAGE_EXTENSION = "jpg";
export const IMAGE_MIME_TYPE = "image/jpeg";

/**
 * Where an office format has several good fixtures, the longest one whose page count this machine
 * reproduces: test/convert/office-to-pdf.test.ts converts each and checks its page count against
 * the MANIFEST, so the end-to-end fixture table (test/system/pipeline-e2e.test.ts) leaves them to
 * it and converts the other fixtures of the same formats. Five MANIFEST counts are not reproduced
 * on this machine, by `soffice --convert-to` either (so: installed fonts, not this converter):
 * odt-toc-15pages 14, word97-30pages 32, winword2-19pages 17, rtf-form-8pages 7, rtf-japanese 2
 * (MANIFEST 1).
 */
export const ONE_OFFICE_FIXTURE_PER_FORMAT = [
  "odt-libreoffice73-odf13.odt",
  "word97-2pages-tika.doc",
  "wordperfect-2pages-table.wpd",
  "sxw-ooo112-invoice.sxw",
  "sxi-aoo411-3slides.sxi",
  "rtf-various-2pages-tika.rtf",
  "odp-libreoffice73-odf13.odp",
  "ppt-mac2001-16slides.ppt",
];

/** Detection lives in src/detect/ (the API and the jobs both use it); this path stays for existing importers. */
export { detectFile, detectFormat, type Detection, type DetectHints } from "../detect/detect-format.ts";

/**
 * `npm run bench -- <name>`: runs the named benchmark, each printing its figure as a ratio against
 * a baseline measured in the same run. Benchmarks are added by the issues that name a figure.
 */
import { benchAbuse } from "./abuse.ts";
import { benchApi } from "./api.ts";
import { benchApp } from "./app.ts";
import { benchComments } from "./comments.ts";
import { benchConvert } from "./convert.ts";
import { benchDetect } from "./detect.ts";
import { benchFairness } from "./fairness.ts";
import { benchFanout } from "./fanout.ts";
import { benchLaunch } from "./launch.ts";
import { benchLoad } from "./load.ts";
import { benchOcr } from "./ocr.ts";
import { benchPagesImages } from "./pages.ts";
import { benchPreauth } from "./preauth.ts";
import { benchRender } from "./render.ts";
import { benchScale } from "./scale.ts";
import { benchSignIn } from "./sign-in.ts";
import { benchSearch } from "./search.ts";
import { benchReader } from "./reader.ts";
import { benchReading } from "./reading.ts";
import { benchStartup } from "./startup.ts";
import { benchV2 } from "./v2.ts";
import { benchStats } from "./stats.ts";

const BENCHMARKS: Record<string, () => Promise<void>> = {
  abuse: benchAbuse,
  api: benchApi,
  app: benchApp,
  comments: benchComments,
  convert: benchConvert,
  detect: benchDetect,
  fairness: benchFairness,
  fanout: benchFanout,
  launch: benchLaunch,
  load: benchLoad,
  ocr: benchOcr,
  pages: benchPagesImages,
  preauth: benchPreauth,
  render: benchRender,
  scale: benchScale,
  "sign-in": benchSignIn,
  search: benchSearch,
  reader: benchReader,
  reading: benchReading,
  startup: benchStartup,
  v2: benchV2,
  stats: benchStats,
};

const name = process.argv[2];
const run = name ? BENCHMARKS[name] : undefined;
if (!run) {
  const names = Object.keys(BENCHMARKS);
  process.stdout.write(`usage: npm run bench -- <name>; available: ${names.length ? names.join(", ") : "(none yet)"}\n`);
  process.exitCode = name ? 2 : 0;
} else {
  await run();
}

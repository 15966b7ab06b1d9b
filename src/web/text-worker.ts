/** One text model built off the event loop: receives the stored text.json's bytes, answers the model. */
import { parentPort, workerData } from "node:worker_threads";
import { buildTextModel, type TextBounds } from "./text-model.ts";

const job = workerData as { raw: ArrayBuffer; pageCount: number; bounds: TextBounds };
const model = buildTextModel(new Uint8Array(job.raw), job.pageCount, job.bounds);
parentPort!.postMessage(model, [model.json.buffer as ArrayBuffer]);

import cliProgress from "cli-progress";

/** What one upload tells the person watching, in the order it happens. */
export interface UploadProgress {
  sending(sent: number, total: number): void;
  /** The server took the file; the conversion runs (state P) for `seconds` so far. */
  converting(seconds: number): void;
  /** Ends the line: live at an address, refused or failed (in words). */
  done(outcome: string): void;
}

export interface ProgressBoard {
  track(label: string): UploadProgress;
  stop(): void;
}

/** Bytes per second in the units people read. */
function formatRate(bytesPerSecond: number): string {
  if (bytesPerSecond >= 1024 * 1024) return `${(bytesPerSecond / (1024 * 1024)).toFixed(1)} MiB/s`;
  return `${Math.round(bytesPerSecond / 1024)} KiB/s`;
}

/**
 * On a terminal: one cli-progress bar per file, redrawn in place, the bytes sent while the file
 * goes up and then the conversion's stage. Elsewhere (a pipe, a log): one plain line per change
 * of stage, since redrawn bars would fill a log with escape codes.
 */
export function progressBoard(stream: NodeJS.WritableStream & { isTTY?: boolean }): ProgressBoard {
  return stream.isTTY ? barBoard(stream) : lineBoard(stream);
}

function barBoard(stream: NodeJS.WritableStream): ProgressBoard {
  const multi = new cliProgress.MultiBar(
    {
      stream,
      format: "{file} [{bar}] {percentage}% {stage}",
      hideCursor: true,
      barsize: 24,
      // The label column is as wide as the longest label, so the bars line up.
      autopadding: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const labels: string[] = [];
  return {
    track(label) {
      labels.push(label);
      const bar = multi.create(1, 0, { file: label, stage: "waiting" });
      const started = Date.now();
      return {
        sending(sent, total) {
          const seconds = Math.max((Date.now() - started) / 1000, 0.001);
          bar.setTotal(Math.max(total, 1));
          bar.update(sent, { stage: `${formatRate(sent / seconds)}` });
        },
        converting(seconds) {
          bar.update(bar.getTotal(), { stage: `converting… ${seconds} s` });
        },
        done(outcome) {
          bar.update(bar.getTotal(), { stage: outcome });
        },
      };
    },
    stop: () => multi.stop(),
  };
}

function lineBoard(stream: NodeJS.WritableStream): ProgressBoard {
  return {
    track(label) {
      let stage = "";
      const say = (next: string) => {
        if (next === stage) return;
        stage = next;
        stream.write(`${label}: ${next}\n`);
      };
      return {
        sending: (sent, total) => say(sent >= total ? "uploaded" : "uploading"),
        converting: () => say("converting"),
        done: (outcome) => say(outcome),
      };
    },
    stop() {},
  };
}

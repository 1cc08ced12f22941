/**
 * `decide batch submit`'s lines while the local intake reads a file: how many lines it has read,
 * queued and refused so far, so that a long file is never read in silence. On a terminal one
 * line is redrawn (at most ten times a second); elsewhere a plain line at most every 2 s.
 */
import { counted } from "../../shared/domain/plural.ts";
import { statusLine } from "./terminal.ts";

/** The counts intake reports as it reads (`runIntake`'s `onProgress`). */
export interface IntakeCounts {
  readonly lines: number;
  readonly accepted: number;
  readonly rejected: number;
}

/** The progress line for `counts`. */
export function intakeLine(counts: IntakeCounts): string {
  return `reading: ${counted(counts.lines, "line")} read, ${counts.accepted.toLocaleString("en-US")} queued, ${counts.rejected.toLocaleString("en-US")} refused`;
}

/** A progress callback drawing on `stream`, and `end` to finish its line before other output. */
export function intakeProgress(
  stream: NodeJS.WriteStream,
  now: () => number = () => performance.now(),
): { readonly update: (counts: IntakeCounts) => void; readonly end: () => void } {
  const line = statusLine(stream);
  const every = stream.isTTY ? 100 : 2_000;
  let last = Number.NEGATIVE_INFINITY;
  return {
    update(counts) {
      if (now() - last < every) return;
      last = now();
      line.show(intakeLine(counts));
    },
    end: () => line.end(),
  };
}

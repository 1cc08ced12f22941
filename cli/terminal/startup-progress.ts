/**
 * `npm start`'s lines while it starts: each prefixed with the seconds since the command began, so
 * a slow step shows where the time went. A step that is starting ("DynamoDB Local: starting
 * Java...") is drawn as a line of its own that, on a terminal, counts its seconds once a second
 * until the next line comes, so the screen is never still for long while Java starts.
 */
import { type StatusLine, statusLine } from "./terminal.ts";

/** The startup lines of one run. */
export interface StartupProgress {
  /** Writes `line` with its time; a line ending in "..." is a step that is starting. */
  say(line: string): void;
  /** Ends the last step's line and stops counting. */
  stop(): void;
}

/** Seconds as the startup lines show them: `  8.3 s`. */
function stamp(ms: number): string {
  return `${(ms / 1000).toFixed(1).padStart(5)} s`;
}

/**
 * Startup lines on `stream`: plain lines with their time; on a terminal, the starting step's line
 * is redrawn every `tickMs` with how long it has taken so far.
 */
export function startupProgress(
  stream: NodeJS.WriteStream,
  now: () => number = () => performance.now(),
  tickMs = 1000,
): StartupProgress {
  const began = now();
  const line: StatusLine = statusLine(stream);
  let step: { text: string; since: number } | undefined;
  const draw = () => {
    if (!step) return;
    const waited = Math.floor((now() - step.since) / 1000);
    line.show(`${stamp(step.since - began)}  ${step.text}${waited > 0 ? ` ${waited} s` : ""}`);
  };
  const timer = setInterval(() => {
    if (stream.isTTY) draw();
  }, tickMs);
  timer.unref();
  return {
    say(text) {
      line.end();
      const at = now();
      if (text.endsWith("...")) {
        step = { text, since: at };
        draw();
        // Elsewhere than a terminal the step's line is written once and stays as it is.
        if (!stream.isTTY) line.end();
        return;
      }
      step = undefined;
      stream.write(`${stamp(at - began)}  ${text}\n`);
    },
    stop() {
      clearInterval(timer);
      line.end();
      step = undefined;
    },
  };
}

/**
 * Output the commands share: a line redrawn in place on a terminal (progress bars, the local
 * mode's live summary), refused input lines printed the same way by `decide publish` and
 * `decide batch submit`, and JSON escaped so that what a producer put in an event cannot drive
 * the terminal that prints it.
 */
import { LINE_FIELD } from "../../shared/domain/input/item-lines.ts";
import type { ItemProblem } from "../../shared/domain/item.ts";

/**
 * Writes `text` over the terminal's current line: back to its start, the text cut to the
 * terminal's width (a wrapped line could not be redrawn), then erased to the end, so a shorter
 * line leaves nothing of a longer one behind.
 */
export function redrawLine(stream: NodeJS.WriteStream, text: string): void {
  const width = stream.columns ? stream.columns - 1 : text.length;
  stream.write(`\r${text.slice(0, width)}\x1b[K`);
}

/** A status line kept current (see {@link statusLine}). */
export interface StatusLine {
  /** Shows `text`: redrawn over the last one on a terminal, a new line otherwise (when it changed). */
  show(text: string): void;
  /** Ends a redrawn line, so that what is printed next starts on a line of its own. */
  end(): void;
}

/**
 * A status line on `stream`: on a terminal it is redrawn in place, so the lines above it (the
 * local mode's exports and review page address) stay on screen; elsewhere (a log file, a pipe)
 * each change is a plain line of its own.
 */
export function statusLine(stream: NodeJS.WriteStream): StatusLine {
  let last: string | undefined;
  let drawn = false;
  return {
    show(text) {
      if (text === last) return;
      last = text;
      if (stream.isTTY) {
        redrawLine(stream, text);
        drawn = true;
      } else stream.write(`${text}\n`);
    },
    end() {
      if (drawn) stream.write("\n");
      drawn = false;
      last = undefined;
    },
  };
}

/** A refused line in words: `line 3: refused: state: must not be empty; id: ...`. */
export function refusedLineText(line: number, problems: readonly ItemProblem[]): string {
  const reasons = problems.map((p) => (p.field === LINE_FIELD ? p.message : `${p.field}: ${p.message}`));
  return `line ${line}: refused: ${reasons.join("; ")}`;
}

/** The exit code of a command that read a file: 1 when some lines were refused. */
export function exitCodeFor(refused: number): number {
  return refused > 0 ? 1 : 0;
}

/**
 * What JSON.stringify leaves raw that a terminal acts on or that changes how a line reads: DEL
 * and the C1 controls (U+0080 to U+009F; U+009B is a one-byte CSI, U+009D an OSC), the bidi
 * marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to
 * U+2069), and the line and paragraph separators (U+2028, U+2029). JSON.stringify already
 * escapes U+0000 to U+001F (ESC and BEL among them).
 */
const TERMINAL_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * `json` (JSON.stringify's output) with every {@link TERMINAL_UNSAFE} character written as its
 * `\uXXXX` escape: still the same JSON (those characters only occur inside its strings), and
 * safe to print.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(TERMINAL_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

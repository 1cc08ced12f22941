/**
 * The lines of an input file (a batch file, a file for `decide publish`, calibration labels), read
 * from a byte stream with memory bounded by the line limit, not by the file: a UTF-8 byte-order
 * mark at the start is dropped (Excel's "CSV UTF-8" always writes one), LF and CRLF both end a
 * line, and a line that is not valid UTF-8 or longer than the limit is refused with its number
 * while the rest of the file is read. Any byte sequence yields lines or line errors; only the
 * source itself (a file that cannot be read) can throw.
 */
import { isUtf8 } from "node:buffer";
import { MAX_ITEM_BYTES } from "../item.ts";

/**
 * The longest line an input file may hold, in bytes, without its line end: one item's limit (the
 * SQS message limit), since one line becomes one message. A longer line is refused, not read.
 */
export const MAX_LINE_BYTES = MAX_ITEM_BYTES;

/** A line read, numbered from 1; blank lines included (a quoted CSV field may span them). */
export interface LineText {
  readonly line: number;
  readonly text: string;
  readonly error?: undefined;
}

/** A line refused: why, in words that can follow "line N: ". */
export interface LineError {
  readonly line: number;
  readonly error: string;
  readonly text?: undefined;
}

/** One line of an input file. */
export type InputLine = LineText | LineError;

/** Options of {@link readLines}. */
export interface ReadLinesOptions {
  /** Longest line accepted, in bytes. @default MAX_LINE_BYTES */
  readonly maxLineBytes?: number;
}

const LF = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Reads `source` line by line; see the module comment. */
export async function* readLines(
  source: AsyncIterable<Uint8Array | string>,
  options: ReadLinesOptions = {},
): AsyncGenerator<InputLine> {
  const limit = options.maxLineBytes ?? MAX_LINE_BYTES;
  // Room for what is stripped before the limit applies: a byte-order mark and a CR.
  const keep = limit + BOM.length + 1;
  let parts: Buffer[] = [];
  let length = 0; // bytes of the current line so far, kept or not
  let last = -1; // its last byte (a CR before the LF is not part of the line)
  let number = 1;
  const finish = (): InputLine => {
    const bytes = length <= keep ? Buffer.concat(parts, length) : undefined;
    const line = lineOf(number, bytes, length, last, limit);
    parts = [];
    length = 0;
    last = -1;
    number++;
    return line;
  };
  for await (const chunk of source) {
    const buffer =
      typeof chunk === "string"
        ? Buffer.from(chunk)
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    while (start < buffer.length) {
      const end = buffer.indexOf(LF, start);
      const stop = end < 0 ? buffer.length : end;
      if (stop > start) {
        length += stop - start;
        last = buffer[stop - 1]!;
        // A line past the limit is only counted; a piece left at the chunk's end is copied so
        // that the chunk itself can be released.
        if (length <= keep) {
          const piece = buffer.subarray(start, stop);
          parts.push(end < 0 ? Buffer.from(piece) : piece);
        } else parts = [];
      }
      if (end < 0) break;
      yield finish();
      start = end + 1;
    }
  }
  if (length > 0) yield finish();
}

/** The line from its bytes (undefined when it was too long to keep). */
function lineOf(
  number: number,
  bytes: Buffer | undefined,
  length: number,
  last: number,
  limit: number,
): InputLine {
  let content = bytes;
  let size = length - (last === CR ? 1 : 0);
  if (number === 1 && content?.subarray(0, BOM.length).equals(BOM)) {
    content = content.subarray(BOM.length);
    size -= BOM.length;
  }
  if (content === undefined || size > limit)
    return { line: number, error: `is ${size} bytes, over the limit of ${limit} bytes per line` };
  if (last === CR) content = content.subarray(0, content.length - 1);
  if (!isUtf8(content)) {
    return {
      line: number,
      error: `is not valid UTF-8 (at byte ${firstInvalidByte(content) + 1} of the line): save the file as UTF-8`,
    };
  }
  return { line: number, text: content.toString("utf8") };
}

/** The offset of the first byte of `bytes` that does not decode as UTF-8. */
function firstInvalidByte(bytes: Buffer): number {
  // Decoding with replacement marks each bad sequence with U+FFFD; a U+FFFD that was in the
  // input itself (EF BF BD) is valid and skipped.
  const text = bytes.toString("utf8");
  let offset = 0;
  let from = 0;
  for (let at = text.indexOf("\uFFFD"); at >= 0; at = text.indexOf("\uFFFD", at + 1)) {
    offset += Buffer.byteLength(text.slice(from, at));
    from = at + 1;
    if (bytes[offset] !== 0xef || bytes[offset + 1] !== 0xbf || bytes[offset + 2] !== 0xbd) return offset;
    offset += 3;
  }
  return offset;
}

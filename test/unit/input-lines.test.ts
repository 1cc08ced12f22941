/**
 * The one reader of input files (`shared/domain/input/lines.ts`): byte-order mark, CRLF, invalid
 * UTF-8 and over-long lines refused per line while the rest is read, the same lines however the
 * bytes are cut into chunks, and, for any byte sequence at all, lines or line errors in order,
 * never an exception (fast-check against a plain oracle).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type InputLine, MAX_LINE_BYTES, readLines } from "../../shared/domain/input/lines.ts";

/** The bytes as a stream cut at `cuts` (offsets). */
async function* chunks(bytes: Uint8Array, cuts: readonly number[] = []): AsyncGenerator<Uint8Array> {
  let start = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    if (cut <= start || cut >= bytes.length) continue;
    yield bytes.subarray(start, cut);
    start = cut;
  }
  if (start < bytes.length) yield bytes.subarray(start);
}

async function all(bytes: Uint8Array, cuts: readonly number[] = [], maxLineBytes?: number) {
  const out: InputLine[] = [];
  for await (const line of readLines(chunks(bytes, cuts), maxLineBytes ? { maxLineBytes } : {}))
    out.push(line);
  return out;
}

const bytesOf = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

/** What each line must come out as, computed the plain way: split on LF, then judge each. */
function oracle(bytes: Uint8Array, limit: number): { line: number; text?: string; error?: RegExp }[] {
  const pieces: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x0a) {
      pieces.push(Buffer.from(bytes.subarray(start, i)));
      start = i + 1;
    }
  }
  if (start < bytes.length) pieces.push(Buffer.from(bytes.subarray(start)));
  return pieces.map((piece, i) => {
    let content = piece;
    if (i === 0 && content.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])))
      content = content.subarray(3);
    if (content.at(-1) === 0x0d) content = content.subarray(0, -1);
    if (content.length > limit) return { line: i + 1, error: /over the limit/ };
    // ignoreBOM: a mark inside the file is text, not a mark for the decoder to drop.
    const text = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(content);
    const valid = Buffer.from(text).equals(content);
    return valid ? { line: i + 1, text } : { line: i + 1, error: /not valid UTF-8/ };
  });
}

describe("input lines", () => {
  it("drops a byte-order mark, accepts CRLF, and keeps a last line without its line end", async () => {
    const lines = await all(bytesOf([0xef, 0xbb, 0xbf], "id,state\r\n", "a,b\r\n", "\r\n", "c,d"));
    expect(lines).toEqual([
      { line: 1, text: "id,state" },
      { line: 2, text: "a,b" },
      { line: 3, text: "" },
      { line: 4, text: "c,d" },
    ]);
    // A mark cut across chunks is still the mark; one later in the file is text.
    const cut = await all(bytesOf([0xef, 0xbb, 0xbf], "x\n", [0xef, 0xbb, 0xbf], "y\n"), [1, 2]);
    expect(cut).toEqual([
      { line: 1, text: "x" },
      { line: 2, text: "\uFEFFy" },
    ]);
  });

  it("refuses invalid UTF-8 with the line number and where, and reads on", async () => {
    const lines = await all(bytesOf("good\n", "bad ", [0xc3, 0x28], " here\n", "caf\u00e9\n"));
    expect(lines[0]).toEqual({ line: 1, text: "good" });
    expect(lines[1]).toEqual({
      line: 2,
      error: "is not valid UTF-8 (at byte 5 of the line): save the file as UTF-8",
    });
    expect(lines[2]).toEqual({ line: 3, text: "café" });
  });

  it("refuses a line over the limit by its size without keeping it, and reads on", async () => {
    const long = "x".repeat(MAX_LINE_BYTES + 1);
    const lines = await all(bytesOf(`${"y".repeat(MAX_LINE_BYTES)}\n${long}\r\nafter\n`), [100, 70_000]);
    expect(lines.map((l) => l.line)).toEqual([1, 2, 3]);
    expect(lines[0]!.text).toHaveLength(MAX_LINE_BYTES);
    expect(lines[1]).toEqual({
      line: 2,
      error: `is ${MAX_LINE_BYTES + 1} bytes, over the limit of ${MAX_LINE_BYTES} bytes per line`,
    });
    expect(lines[2]).toEqual({ line: 3, text: "after" });
  });

  it("yields, for any bytes cut anywhere, exactly the oracle's lines and never throws", async () => {
    // Bytes drawn to hit the interesting cases often: LF, CR, the mark's bytes, bad sequences.
    const byte = fc.oneof(
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom(0x0a, 0x0d, 0xef, 0xbb, 0xbf, 0xc3, 0x80, 0x61),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.array(byte, { maxLength: 300 }),
        fc.array(fc.nat(300), { maxLength: 6 }),
        fc.integer({ min: 1, max: 40 }),
        async (marked, values, cuts, limit) => {
          const bytes = Uint8Array.from([...(marked ? [0xef, 0xbb, 0xbf] : []), ...values]);
          const lines = await all(bytes, cuts, limit);
          const expected = oracle(bytes, limit);
          expect(lines.map((l) => l.line)).toEqual(expected.map((e) => e.line));
          for (const [i, line] of lines.entries()) {
            const want = expected[i]!;
            if (want.error) expect(line.error).toMatch(want.error);
            else expect(line).toEqual({ line: want.line, text: want.text });
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

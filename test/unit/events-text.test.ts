/**
 * `decide events` (and `--follow`, which prints through the same `eventText`) shows what producers
 * put in events: every character a terminal would act on or that reorders a line must come out
 * escaped, as ESC and BEL always did, and the printed text must still be the same JSON.
 */
import { describe, expect, it } from "vitest";
import { eventText } from "../../cli/events.ts";
import { terminalSafeJson } from "../../cli/terminal/terminal.ts";

const UNSAFE = [
  "\x1b", // ESC
  "\x07", // BEL
  "\x7f", // DEL
  "\u0080",
  "\u009b", // one-byte CSI
  "\u009d", // OSC
  "\u009f",
  "\u061c",
  "\u200e",
  "\u200f",
  "\u2028",
  "\u2029",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e", // right-to-left override
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
];

const event = {
  "detail-type": "Decision Made",
  source: "decision-pipeline",
  detail: {
    itemId: `x${UNSAFE.join("y")}z`,
    reason: "\u009b31mred\u009d0;title\u0007 \u202eevil\u202c",
    [`key\u2028${"\u009b"}`]: "value",
  },
};

describe("decide events escapes what a producer could use to drive the terminal", () => {
  for (const oneLine of [true, false])
    it(`prints no C1 control, bidi control or line separator raw (${oneLine ? "one line" : "indented"})`, () => {
      const text = eventText(event, oneLine);
      for (const c of UNSAFE)
        expect(text.includes(c), `U+${c.charCodeAt(0).toString(16).padStart(4, "0")}`).toBe(false);
      expect(text).toContain("\\u009b31mred\\u009d0;title\\u0007 \\u202eevil\\u202c");
      // The same JSON: a consumer piping it to jq reads back exactly what was put on the bus.
      expect(JSON.parse(text)).toEqual(event);
      if (oneLine) expect(text.split("\n")).toHaveLength(1);
    });

  it("leaves other text as JSON.stringify writes it", () => {
    const plain = JSON.stringify({ note: "naïve café ✓ 日本語 — ok", n: 1 });
    expect(terminalSafeJson(plain)).toBe(plain);
  });
});

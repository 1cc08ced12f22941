/**
 * The command line's shared output: the local mode's live summary redrawn in place on a
 * terminal (so the review page's address above it stays on screen) and plain lines elsewhere; a
 * redrawn line erases what a longer one left (no `ETA 8 sss`); refused lines in one wording.
 */
import { describe, expect, it } from "vitest";
import { redrawLine, refusedLineText, statusLine } from "../../cli/terminal/terminal.ts";

/** A stream that keeps what is written to it. */
function stream(isTTY: boolean, columns?: number) {
  const written: string[] = [];
  const fake = { isTTY, columns, write: (text: string) => written.push(text) > 0 };
  return { fake: fake as unknown as NodeJS.WriteStream, written };
}

describe("terminal output", () => {
  it("redraws the summary in place on a terminal, with no new line until something else is printed", () => {
    const { fake, written } = stream(true, 80);
    const line = statusLine(fake);
    line.show("decided 1");
    line.show("decided 1");
    line.show("decided 2, waiting 0");
    expect(written).toEqual(["\rdecided 1\x1b[K", "\rdecided 2, waiting 0\x1b[K"]);
    expect(written.join("")).not.toContain("\n");
    line.end();
    line.end();
    expect(written.at(-1)).toBe("\n");
    expect(written.filter((w) => w === "\n")).toHaveLength(1);
  });

  it("prints one plain line per change off a terminal", () => {
    const { fake, written } = stream(false);
    const line = statusLine(fake);
    for (const text of ["decided 1", "decided 1", "decided 2"]) line.show(text);
    line.end();
    expect(written).toEqual(["decided 1\n", "decided 2\n"]);
  });

  it("erases the rest of a longer line and cuts a line to the terminal's width", () => {
    const { fake, written } = stream(true, 12);
    redrawLine(fake, "ETA 8 s");
    redrawLine(fake, "a line longer than twelve");
    expect(written).toEqual(["\rETA 8 s\x1b[K", "\ra line long\x1b[K"]);
  });

  it("words refused lines one way for publish and batch submit", () => {
    expect(
      refusedLineText(3, [
        { field: "state", message: "must not be empty" },
        { field: "line", message: "is not valid UTF-8 (at byte 2 of the line)" },
      ]),
    ).toBe("line 3: refused: state: must not be empty; is not valid UTF-8 (at byte 2 of the line)");
  });
});

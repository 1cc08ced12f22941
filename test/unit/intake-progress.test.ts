/**
 * `decide batch submit` says what intake has read while it reads (before, a 485-line file printed
 * nothing for about 75 s, then everything at once), and counts read as words do: "1 line", never
 * "1 lines"; "1 audit sample is disputed", never "1 audit samples are".
 */
import { describe, expect, it } from "vitest";
import { intakeLine, intakeProgress } from "../../cli/terminal/intake-progress.ts";
import { counted } from "../../shared/domain/plural.ts";

function stream(isTTY: boolean) {
  const written: string[] = [];
  const fake = { isTTY, columns: 200, write: (text: string) => written.push(text) > 0 };
  return { fake: fake as unknown as NodeJS.WriteStream, written };
}

describe("intake progress", () => {
  it("redraws the counts on a terminal as intake reports them, at most ten times a second", () => {
    const { fake, written } = stream(true);
    let clock = 0;
    const progress = intakeProgress(fake, () => clock);
    progress.update({ lines: 10, accepted: 9, rejected: 1 });
    clock += 50;
    progress.update({ lines: 20, accepted: 19, rejected: 1 }); // too soon: skipped
    clock += 100;
    progress.update({ lines: 1_230, accepted: 1_220, rejected: 10 });
    progress.end();
    expect(written).toEqual([
      "\rreading: 10 lines read, 9 queued, 1 refused\x1b[K",
      "\rreading: 1,230 lines read, 1,220 queued, 10 refused\x1b[K",
      "\n",
    ]);
  });

  it("writes a plain line at most every 2 s elsewhere", () => {
    const { fake, written } = stream(false);
    let clock = 0;
    const progress = intakeProgress(fake, () => clock);
    for (let lines = 10; lines <= 100; lines += 10) {
      progress.update({ lines, accepted: lines, rejected: 0 });
      clock += 500;
    }
    progress.end();
    expect(written).toEqual([
      "reading: 10 lines read, 10 queued, 0 refused\n",
      "reading: 50 lines read, 50 queued, 0 refused\n",
      "reading: 90 lines read, 90 queued, 0 refused\n",
    ]);
  });

  it("counts in words", () => {
    expect(intakeLine({ lines: 1, accepted: 0, rejected: 1 })).toBe(
      "reading: 1 line read, 0 queued, 1 refused",
    );
    expect(counted(1, "audit sample is", "audit samples are")).toBe("1 audit sample is");
    expect(counted(2, "audit sample is", "audit samples are")).toBe("2 audit samples are");
    expect(counted(0, "event")).toBe("0 events");
    expect(counted(1200, "label")).toBe("1,200 labels");
  });
});

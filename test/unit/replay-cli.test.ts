import { describe, expect, it } from "vitest";
import { parseDuration } from "../../cli/duration.ts";
import { DRY_RUN_NOTE, replayCommand } from "../../cli/replay.ts";
import type { DeadLetter } from "../../shared/use-cases/dead-letter-description.ts";
import type { ReplayReport } from "../../shared/use-cases/replay.ts";

type Printable = Parameters<typeof replayCommand.print>;

describe("decide replay durations", () => {
  it("reads seconds, minutes, hours and days", () => {
    expect(parseDuration("90s", "older-than")).toBe(90_000);
    expect(parseDuration("30m", "older-than")).toBe(1_800_000);
    expect(parseDuration("2h", "older-than")).toBe(7_200_000);
    expect(parseDuration("1.5d", "older-than")).toBe(129_600_000);
  });

  it("names the flag when it cannot read one", () => {
    expect(() => parseDuration("two hours", "newer-than")).toThrow(
      /--newer-than must look like 90s, 30m, 2h or 1d/,
    );
  });
});

describe("decide replay's report", () => {
  const letter: DeadLetter = {
    kind: "item",
    messageId: "m-1",
    itemId: "TICKET-1001",
    policy: "ticket-routing",
    reason: undefined,
    sentAt: "2026-12-01T00:00:00.000Z",
    receiveCount: 5,
  };
  const report: ReplayReport = { matched: [letter], skipped: 0, moved: 0, left: 1, failed: [] };
  const options = {} as Printable[1];

  it("does not show a receive count its own dry runs raised, and says a dry run reads", () => {
    // Before: "would replay item TICKET-1001 policy=ticket-routing sent=... receives=5".
    const printed = replayCommand.print({ kind: "replay", report, dryRun: true }, options);
    expect(printed.lines[0]).toBe(
      "would replay item TICKET-1001 policy=ticket-routing sent=2026-12-01T00:00:00.000Z",
    );
    expect(printed.lines.join("\n")).not.toContain("receives=");
    expect(printed.lines.at(-1)).toBe(DRY_RUN_NOTE);
    const moved = replayCommand.print(
      { kind: "replay", report: { ...report, moved: 1, left: 0 }, dryRun: false },
      options,
    );
    expect(moved.lines).not.toContain(DRY_RUN_NOTE);
  });
});

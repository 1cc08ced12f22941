/**
 * `npm start`'s startup lines: each step named as it starts, with the time since the command
 * began, and on a terminal the starting step counts its seconds until the next line (before,
 * the first start printed nothing for 25 to 55 s while the demo model was fitted and Java
 * started). Off a terminal the lines are written once each.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startupProgress } from "../../cli/terminal/startup-progress.ts";

/** A stream that keeps what is written to it. */
function stream(isTTY: boolean) {
  const written: string[] = [];
  const fake = { isTTY, columns: 200, write: (text: string) => written.push(text) > 0 };
  return { fake: fake as unknown as NodeJS.WriteStream, written };
}

describe("startup progress", () => {
  let clock = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    clock = 0;
  });
  afterEach(() => vi.useRealTimers());
  /** Moves the clock and the timers together, 100 ms at a time. */
  const advance = (ms: number) => {
    for (let step = 0; step < ms; step += 100) {
      clock += 100;
      vi.advanceTimersByTime(100);
    }
  };

  it("names each step as it starts with its time, and counts a slow step's seconds on a terminal", () => {
    const { fake, written } = stream(true);
    const progress = startupProgress(fake, () => clock);
    progress.say("starting the local pipeline");
    advance(100);
    progress.say("DynamoDB Local: starting Java...");
    advance(3_000);
    progress.say("DynamoDB Local: http://127.0.0.1:8000");
    progress.stop();
    const screen = written.join("");
    expect(screen).toContain("  0.0 s  starting the local pipeline\n");
    // The step's line, redrawn each second with what it has waited so far, then left as it was.
    expect(written).toContain("\r  0.1 s  DynamoDB Local: starting Java...\x1b[K");
    expect(written).toContain("\r  0.1 s  DynamoDB Local: starting Java... 1 s\x1b[K");
    expect(written).toContain("\r  0.1 s  DynamoDB Local: starting Java... 2 s\x1b[K");
    expect(screen).toContain("Java... 2 s\x1b[K\n  3.1 s  DynamoDB Local: http://127.0.0.1:8000\n");
    // Stopped: nothing is drawn any more.
    const before = written.length;
    advance(5_000);
    expect(written.length).toBe(before);
  });

  it("writes each line once off a terminal", () => {
    const { fake, written } = stream(false);
    const progress = startupProgress(fake, () => clock);
    progress.say("demo model: fitting...");
    advance(10_000);
    progress.say("demo model: demo.gguf");
    progress.stop();
    expect(written).toEqual(["  0.0 s  demo model: fitting...\n", " 10.0 s  demo model: demo.gguf\n"]);
  });
});

/**
 * The journal that keeps the local queues and bus across restarts: what was set and not deleted
 * comes back on the next open, a line a kill cut off is ignored, and the file stays proportional
 * to the live entries however many passed through.
 */
import { appendFileSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JournaledMap } from "../../infra/local/journal.ts";

const fresh = () => join(mkdtempSync(join(tmpdir(), "journal-")), "kept.jsonl");

describe("JournaledMap", () => {
  it("finds on the next open what was set and not deleted, without a close (as after SIGKILL)", () => {
    const path = fresh();
    const first = JournaledMap.open<{ n: number }>(path);
    first.set("a", { n: 1 });
    first.set("b", { n: 2 });
    first.set("a", { n: 3 });
    first.delete("b");
    first.set("c", { n: 4 });
    // No close: the writes are in the file already.
    const second = JournaledMap.open<{ n: number }>(path);
    expect([...second.entries()]).toEqual([
      ["a", { n: 3 }],
      ["c", { n: 4 }],
    ]);
    first.close();
    second.close();
  });

  it("ignores a last line cut off half-way", () => {
    const path = fresh();
    const first = JournaledMap.open<string>(path);
    first.set("kept", "yes");
    first.close();
    appendFileSync(path, '["s","torn","ha');
    const second = JournaledMap.open<string>(path);
    expect([...second.entries()]).toEqual([["kept", "yes"]]);
    // The rewrite at open dropped the torn line, so later lines are read whole.
    second.set("after", "also");
    second.close();
    expect([...JournaledMap.open<string>(path).entries()]).toEqual([
      ["kept", "yes"],
      ["after", "also"],
    ]);
  });

  it("stays proportional to the live entries: 100,000 sets and deletes leave a small file", () => {
    const path = fresh();
    const map = JournaledMap.open<string>(path);
    for (let i = 0; i < 100_000; i++) {
      map.set(`k${i}`, "x".repeat(100));
      if (i >= 10) map.delete(`k${i - 10}`);
    }
    expect(map.size).toBe(10);
    // At most the lines since the last rewrite (20,000 or so, ~130 bytes each) plus the live ones.
    expect(statSync(path).size).toBeLessThan(4_000_000);
    map.close();
    expect(JournaledMap.open<string>(path).size).toBe(10);
  });

  it("lives in memory without a path", () => {
    const map = JournaledMap.open<number>();
    map.set("a", 1);
    map.delete("missing");
    expect(map.get("a")).toBe(1);
  });
});

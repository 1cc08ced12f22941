/**
 * The local journal under faults a file can meet: a full disk that takes part of a line and then
 * refuses the rest (simulated by wrapping `writeSync` and `ftruncateSync`), and files a person
 * edited by hand (a `null` line, an operation this code does not know, a byte-order mark). No
 * acknowledged entry may be lost, and none of these may stop the start.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { JournaledMap } from "../../infra/local/journal.ts";

/** The fault the wrapped file functions play: off, or a disk that fills part-way through the next write. */
const fault = vi.hoisted(() => ({ fullAfterBytes: -1, truncateFails: false }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const noSpace = () =>
    Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
  const writeSync = (fd: number, data: string | NodeJS.ArrayBufferView, ...rest: unknown[]): number => {
    if (fault.fullAfterBytes < 0) return (real.writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
    const bytes =
      typeof data === "string"
        ? Buffer.from(data)
        : Buffer.from(data.buffer, data.byteOffset, data.byteLength).subarray(
            (rest[0] as number | undefined) ?? 0,
            ((rest[0] as number | undefined) ?? 0) + ((rest[1] as number | undefined) ?? data.byteLength),
          );
    if (fault.fullAfterBytes === 0) throw noSpace();
    // The disk takes what it has room for and says how much: a short write, not yet an error.
    const taken = Math.min(fault.fullAfterBytes, bytes.length);
    real.writeSync(fd, bytes, 0, taken);
    fault.fullAfterBytes -= taken;
    return taken;
  };
  const ftruncateSync = (fd: number, length?: number) => {
    if (fault.truncateFails) throw noSpace();
    real.ftruncateSync(fd, length);
  };
  return { ...real, writeSync, ftruncateSync, default: { ...real, writeSync, ftruncateSync } };
});

const fresh = () => join(mkdtempSync(join(tmpdir(), "journal-faults-")), "kept.jsonl");

afterEach(() => {
  fault.fullAfterBytes = -1;
  fault.truncateFails = false;
});

/** Sets each key in turn, the disk filling during `failAt`'s write; returns the keys acknowledged. */
function writeThroughFullDisk(path: string, failAt: string, truncateFails: boolean): string[] {
  const map = JournaledMap.open<{ n: number }>(path);
  const acknowledged: string[] = [];
  for (const [i, key] of ["a", "b", "c", "d"].entries()) {
    if (key === failAt) {
      fault.fullAfterBytes = 7; // Part of the line, then no room at all.
      fault.truncateFails = truncateFails;
    }
    try {
      map.set(key, { n: i });
      acknowledged.push(key);
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
    }
    // Room again (something else freed space) before the next entry.
    fault.fullAfterBytes = -1;
    fault.truncateFails = false;
  }
  map.close();
  return acknowledged;
}

describe("the local journal on a full disk", () => {
  it("never acknowledges a line the disk took only part of, and keeps every later entry", () => {
    const path = fresh();
    const acknowledged = writeThroughFullDisk(path, "b", false);
    expect(acknowledged).toEqual(["a", "c", "d"]);
    const again = JournaledMap.open<{ n: number }>(path);
    expect([...again.entries()].map(([k]) => k)).toEqual(acknowledged);
    expect(again.get("c")).toEqual({ n: 2 });
    again.close();
    // The torn bytes were cut off: the file is whole lines only.
    expect(readFileSync(path, "utf8")).not.toContain('["s","b"');
  });

  it("starts the next line on a line of its own when the torn bytes cannot be cut off", () => {
    const path = fresh();
    const acknowledged = writeThroughFullDisk(path, "b", true);
    expect(acknowledged).toEqual(["a", "c", "d"]);
    const again = JournaledMap.open<{ n: number }>(path);
    expect([...again.entries()].map(([k]) => k)).toEqual(acknowledged);
    again.close();
  });

  it("keeps the map as the disk has it when a write fails: a refused set is not seen", () => {
    const path = fresh();
    const map = JournaledMap.open<number>(path);
    map.set("kept", 1);
    fault.fullAfterBytes = 0;
    expect(() => map.set("refused", 2)).toThrow(/ENOSPC/);
    expect(() => map.delete("kept")).toThrow(/ENOSPC/);
    fault.fullAfterBytes = -1;
    expect(map.get("refused")).toBeUndefined();
    expect(map.get("kept")).toBe(1);
    map.close();
  });
});

describe("the local journal on a file edited by hand", () => {
  const opened = (text: string) => {
    const path = fresh();
    writeFileSync(path, text);
    const map = JournaledMap.open<number>(path);
    const entries = [...map.entries()];
    map.close();
    return entries;
  };

  it("skips a null line and other lines that are not journal lines, and starts", () => {
    expect(opened('["s","a",1]\nnull\n42\n"s"\n[]\n[null]\n{"s":1}\n["s","b",2]\n')).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
  });

  it("does not read an unknown operation as a delete", () => {
    expect(opened('["s","a",1]\n["x","a"]\n["S","a"]\n["d","a","extra"]\n')).toEqual([["a", 1]]);
    expect(opened('["s","a",1]\n["d","a"]\n')).toEqual([]);
  });

  it("keeps the first entry of a file saved with a byte-order mark", () => {
    expect(opened('\uFEFF["s","first",1]\n["s","second",2]\n')).toEqual([
      ["first", 1],
      ["second", 2],
    ]);
  });
});

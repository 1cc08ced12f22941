/**
 * A map kept on disk as an append-only journal: each change is one JSON line written with a
 * synchronous write before the caller answers anyone, so a process killed at any point (SIGKILL
 * included) finds on its next start every entry it had acknowledged. The operating system may
 * still lose the last writes if the machine itself stops (no fsync per write: the local mode
 * guards against its own process dying, not against power loss). The file is rewritten with only
 * the live entries when changes outnumber them, so it stays proportional to what is stored, not
 * to how much passed through.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** One line of the journal: a key set to a value, or a key removed. */
type Line<V> = ["s", string, V] | ["d", string];

/** Lines written since the last rewrite, above which the file is rewritten (when they outnumber the entries). */
const REWRITE_AFTER = 20_000;

/** A map whose changes survive the process; in memory only when opened without a file. */
export class JournaledMap<V> {
  readonly #entries = new Map<string, V>();
  readonly #path: string | undefined;
  #fd: number | undefined;
  #linesSinceRewrite = 0;

  private constructor(path: string | undefined) {
    this.#path = path;
  }

  /**
   * Opens the journal at `path` (created when missing; a last line cut off by a kill is
   * ignored), compacts it, and keeps appending to it. Without a path the map lives in memory.
   */
  static open<V>(path?: string): JournaledMap<V> {
    const map = new JournaledMap<V>(path);
    if (path === undefined) return map;
    mkdirSync(dirname(path), { recursive: true });
    if (existsSync(path)) map.#replay(readFileSync(path, "utf8"));
    map.#rewrite();
    return map;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  entries(): IterableIterator<[string, V]> {
    return this.#entries.entries();
  }

  /** Sets `key`, on disk before it returns. */
  set(key: string, value: V): void {
    this.#entries.set(key, value);
    this.#append(["s", key, value]);
  }

  /** Removes `key` (nothing is written when it is absent). */
  delete(key: string): void {
    if (!this.#entries.delete(key)) return;
    this.#append(["d", key]);
  }

  /** Stops writing; the file keeps what was written. Safe to call twice. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #replay(text: string): void {
    for (const raw of text.split("\n")) {
      if (!raw) continue;
      let line: Line<V>;
      try {
        line = JSON.parse(raw) as Line<V>;
      } catch {
        continue; // The line a kill cut off: its write was never acknowledged.
      }
      if (line[0] === "s") this.#entries.set(line[1], line[2]);
      else this.#entries.delete(line[1]);
    }
  }

  #append(line: Line<V>): void {
    if (this.#path === undefined) return;
    if (this.#fd === undefined) throw new Error(`the journal ${this.#path} is closed`);
    writeSync(this.#fd, `${JSON.stringify(line)}\n`);
    this.#linesSinceRewrite++;
    if (this.#linesSinceRewrite > REWRITE_AFTER && this.#linesSinceRewrite > 2 * this.#entries.size)
      this.#rewrite();
  }

  /** Writes the live entries to a new file and renames it over the old one (atomic on one file system). */
  #rewrite(): void {
    const path = this.#path!;
    this.close();
    const next = `${path}.next`;
    const fd = openSync(next, "w");
    try {
      let chunk = "";
      for (const [key, value] of this.#entries) {
        chunk += `${JSON.stringify(["s", key, value])}\n`;
        if (chunk.length > 1 << 20) {
          writeSync(fd, chunk);
          chunk = "";
        }
      }
      if (chunk) writeSync(fd, chunk);
    } finally {
      closeSync(fd);
    }
    renameSync(next, path);
    this.#fd = openSync(path, "a");
    this.#linesSinceRewrite = 0;
  }
}

/**
 * A map kept on disk as an append-only journal: each change is one JSON line written with a
 * synchronous write before the caller answers anyone, so a process killed at any point (SIGKILL
 * included) finds on its next start every entry it had acknowledged. The operating system may
 * still lose the last writes if the machine itself stops (no fsync per write: the local mode
 * guards against its own process dying, not against power loss). The file is rewritten with only
 * the live entries when changes outnumber them, so it stays proportional to what is stored, not
 * to how much passed through.
 *
 * A write the disk cannot take whole (a full disk: `writeSync` writes part of a line, then
 * fails) throws to the caller, so the entry was never acknowledged, and its torn bytes are cut off
 * the file (or, when even that fails, the next line starts on a line of its own), so no later
 * entry is lost behind them. Reading back skips what is not a journal line (a torn line, a
 * hand-edited `null`, an operation this code does not know) instead of failing the start or
 * reading it as a delete, and ignores a byte-order mark an editor put at the start.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from "node:fs";
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
  /** The file's length after the last whole line: where torn bytes are cut back to. */
  #length = 0;
  /** A failed write left bytes that could not be cut off: the next line starts after a new line. */
  #torn = false;

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
    this.#append(["s", key, value]);
    this.#entries.set(key, value);
    this.#compactIfDue();
  }

  /** Removes `key` (nothing is written when it is absent). */
  delete(key: string): void {
    if (!this.#entries.has(key)) return;
    this.#append(["d", key]);
    this.#entries.delete(key);
    this.#compactIfDue();
  }

  /** Stops writing; the file keeps what was written. Safe to call twice. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #replay(text: string): void {
    // An editor may have saved the file with a byte-order mark: it is not part of the first line.
    for (const raw of text.replace(/^\uFEFF/, "").split("\n")) {
      const line = journalLine<V>(raw);
      if (line?.[0] === "s") this.#entries.set(line[1], line[2]);
      else if (line?.[0] === "d") this.#entries.delete(line[1]);
    }
  }

  /**
   * Appends one line, whole or not at all: a write that fails part-way throws, after cutting its
   * torn bytes off (or noting that the next line must start on a line of its own).
   */
  #append(line: Line<V>): void {
    if (this.#path === undefined) return;
    if (this.#fd === undefined) throw new Error(`the journal ${this.#path} is closed`);
    const fd = this.#fd;
    const bytes = Buffer.from(`${this.#torn ? "\n" : ""}${JSON.stringify(line)}\n`);
    try {
      writeWhole(fd, bytes);
    } catch (error) {
      this.#cutTornBytes(fd);
      throw error;
    }
    this.#torn = false;
    this.#length += bytes.length;
    this.#linesSinceRewrite++;
  }

  /** After a failed write: the file back to its last whole line, or else a new line owed. */
  #cutTornBytes(fd: number): void {
    try {
      if (fstatSync(fd).size !== this.#length) ftruncateSync(fd, this.#length);
    } catch {
      this.#torn = true;
    }
  }

  /** Rewrites the file when changes outnumber the entries; a failed rewrite leaves the journal as it was. */
  #compactIfDue(): void {
    if (this.#linesSinceRewrite <= REWRITE_AFTER || this.#linesSinceRewrite <= 2 * this.#entries.size) return;
    try {
      this.#rewrite();
    } catch {
      // A full disk: the appended journal still holds every entry; keep appending to it.
      if (this.#fd === undefined) this.#reopen();
    }
  }

  #reopen(): void {
    this.#fd = openSync(this.#path!, "a");
    this.#length = fstatSync(this.#fd).size;
    this.#torn = false;
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
          writeWhole(fd, Buffer.from(chunk));
          chunk = "";
        }
      }
      if (chunk) writeWhole(fd, Buffer.from(chunk));
    } finally {
      closeSync(fd);
    }
    renameSync(next, path);
    this.#reopen();
    this.#linesSinceRewrite = 0;
  }
}

/** Writes all of `bytes`: `writeSync` may write part of them and say so, which is not a failure yet. */
function writeWhole(fd: number, bytes: Buffer): void {
  for (let done = 0; done < bytes.length; ) {
    const written = writeSync(fd, bytes, done, bytes.length - done);
    if (written <= 0) throw new Error(`the journal's disk took none of ${bytes.length - done} bytes`);
    done += written;
  }
}

/** One journal line, or undefined for anything else (a torn line, `null`, an unknown operation). */
function journalLine<V>(raw: string): Line<V> | undefined {
  if (!raw) return undefined;
  let line: unknown;
  try {
    line = JSON.parse(raw);
  } catch {
    return undefined; // The line a kill cut off: its write was never acknowledged.
  }
  if (!Array.isArray(line) || typeof line[1] !== "string") return undefined;
  if (line[0] === "s" && line.length === 3) return line as Line<V>;
  if (line[0] === "d" && line.length === 2) return line as Line<V>;
  return undefined;
}

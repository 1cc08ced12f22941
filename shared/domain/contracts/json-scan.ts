/**
 * One pass over JSON text before JSON.parse reads it: the objects that repeat a key (JSON.parse
 * keeps the last one silently), each shallow object's keys in document order, and nesting deeper
 * than a bound (refused before anything recurses into it). The pass is a generator that stops
 * after every slice of text, so a server can let other requests (a health check) in between the
 * slices of a large body; a caller that has nothing to let in runs it to the end at once.
 */
import { JsonInputError } from "./json-error.ts";

/** An object that repeats a key: the key, and the path of the object from the root. */
export interface JsonDuplicate {
  readonly key: string;
  /** Keys and array indexes from the root to the object that repeats `key`. */
  readonly at: readonly string[];
}

/** What the scan found. */
export interface JsonScan {
  /** Every object that repeats a key (the first {@link MAX_DUPLICATES_REPORTED}). */
  readonly duplicates: JsonDuplicate[];
  /** The keys of each object up to {@link KEY_ORDER_DEPTH} deep, by path joined with NUL. */
  readonly keys: Map<string, string[]>;
}

/** Repeated keys one document reports at most. */
export const MAX_DUPLICATES_REPORTED = 100;

/** Object paths are remembered this deep (batch.<i>.questions.<key>.criteria is 5). */
const KEY_ORDER_DEPTH = 5;

/** Characters scanned between two stops: about a millisecond of work on a quiet core. */
export const SCAN_SLICE_CHARS = 256 * 1024;

const QUOTE = 34;
const COLON = 58;
const COMMA = 44;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;

type Frame = { keys: string[] | undefined; seen: Set<string> | undefined; name: string; index: number };

/**
 * Scans `text`, yielding after about every `sliceChars` characters. Syntax errors are left to
 * JSON.parse (a malformed text only yields a partial scan); nesting deeper than `maxDepth`
 * throws {@link JsonInputError}.
 */
export function* jsonScanSteps(
  text: string,
  maxDepth: number,
  sliceChars = SCAN_SLICE_CHARS,
): Generator<void, JsonScan, void> {
  const stack: Frame[] = [];
  const scan: JsonScan = { duplicates: [], keys: new Map() };
  let pendingKey: string | undefined;
  // The innermost open object or array (the stack's last frame), kept apart: read at every comma.
  let top: Frame | undefined;
  const names = () => stack.slice(1).map((f) => f.name);
  const backslashes = { next: -2 };
  let pauseAt = sliceChars;
  for (let i = 0; i < text.length; i++) {
    if (i >= pauseAt) {
      yield;
      pauseAt = i + sliceChars;
    }
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const { end, escaped } = endOfString(text, i + 1, backslashes);
      const frame = top;
      let next = end + 1;
      while (next < text.length && isJsonSpace(text.charCodeAt(next))) next++;
      if (frame?.seen && text.charCodeAt(next) === COLON) {
        let key: string;
        try {
          key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        } catch {
          return scan; // not JSON: JSON.parse reports it
        }
        if (frame.seen.has(key) && scan.duplicates.length < MAX_DUPLICATES_REPORTED)
          scan.duplicates.push({ key, at: names() });
        frame.seen.add(key);
        frame.keys?.push(key);
        pendingKey = key;
      }
      i = end;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      const parent = top;
      const name = parent?.seen ? (pendingKey ?? "") : parent ? String(parent.index) : "";
      if (stack.length >= maxDepth) {
        const where = [...names(), name].filter(Boolean).slice(0, 8).join(".");
        throw new JsonInputError(`the body is nested more than ${maxDepth} levels deep`, where || undefined);
      }
      const isObject = code === OPEN_OBJECT;
      top = {
        keys: isObject && stack.length <= KEY_ORDER_DEPTH ? [] : undefined,
        seen: isObject ? new Set() : undefined,
        name,
        index: 0,
      };
      stack.push(top);
      pendingKey = undefined;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      const frame = stack.pop();
      top = stack.at(-1);
      if (frame?.keys)
        scan.keys.set(
          stack.length === 0 ? "" : [...stack.slice(1).map((f) => f.name), frame.name].join("\u0000"),
          frame.keys,
        );
    } else if (code === COMMA) {
      if (top && !top.seen) top.index++;
    }
  }
  return scan;
}

/**
 * Where the string that starts before `from` ends (its closing quote, or the text's end) and
 * whether it holds an escape. `backslashes.next` caches the next backslash at or after a
 * position (-1: none left; -2: not looked for yet), so the text is searched for them once, not
 * once per string.
 */
function endOfString(
  text: string,
  from: number,
  backslashes: { next: number },
): { end: number; escaped: boolean } {
  let end = from;
  let escaped = false;
  for (;;) {
    const quote = text.indexOf('"', end);
    if (backslashes.next !== -1 && backslashes.next < end) backslashes.next = text.indexOf("\\", end);
    const slash = backslashes.next;
    if (quote === -1 || slash === -1 || slash > quote)
      return { end: quote === -1 ? text.length : quote, escaped };
    escaped = true;
    end = slash + 2;
  }
}

/** Runs a scan to its end without stopping. */
export function scanJson(text: string, maxDepth: number): JsonScan {
  const steps = jsonScanSteps(text, maxDepth);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs a scan, awaiting `pause()` between its slices (a server passes one that lets other requests in). */
export async function scanJsonInSlices(
  text: string,
  maxDepth: number,
  pause: () => Promise<void>,
): Promise<JsonScan> {
  const steps = jsonScanSteps(text, maxDepth);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
  }
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isJsonSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

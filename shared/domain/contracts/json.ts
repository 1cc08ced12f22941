/**
 * JSON in and out of the endpoint and the pipeline: floats that always carry a decimal point (strict clients
 * reject `0` where they expect a probability), and parsing that refuses duplicate object keys
 * (JSON.parse silently keeps the last, which would hide a duplicated option id).
 */

/** A number that must serialize as a float: `0.0`, `1.0`, `0.25`, `1.0e-7`. */
export class JsonFloat {
  constructor(readonly value: number) {}
}

/** A contract type as the server writes it: any number may be a {@link JsonFloat}. */
export type Wire<T> = T extends number
  ? number | JsonFloat
  : T extends readonly (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

/** Marks `value` to serialize with a decimal point. */
export function float(value: number): JsonFloat {
  return new JsonFloat(value);
}

/** Formats a finite number as a JSON float literal. */
export function formatFloat(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`cannot serialize ${value} as a JSON number`);
  const text = String(value);
  if (/[.]/.test(text)) return text;
  const exponent = text.indexOf("e");
  return exponent < 0 ? `${text}.0` : `${text.slice(0, exponent)}.0${text.slice(exponent)}`;
}

/**
 * An object whose keys serialize in the given order. A plain object puts integer-like keys first
 * ("2", "1", "b" comes out as "1", "2", "b"), which breaks a contract that keys keep the order
 * the client declared.
 */
export class JsonOrdered {
  constructor(readonly entries: readonly (readonly [string, unknown])[]) {}
}

/** An object of `entries` that serializes in their order; typed as the record it stands for. */
export function ordered<T>(entries: readonly (readonly [string, T])[]): Record<string, T> {
  return new JsonOrdered(entries) as unknown as Record<string, T>;
}

/**
 * JSON.stringify that writes {@link JsonFloat} values as float literals and {@link JsonOrdered}
 * objects with their keys in order.
 */
export function stringifyJson(value: unknown, indent?: number): string {
  const literals: string[] = [];
  const text = JSON.stringify(
    value,
    (_key, item: unknown) => {
      if (item instanceof JsonFloat) return `\u0000${literals.push(formatFloat(item.value)) - 1}\u0000`;
      if (item instanceof JsonOrdered) {
        const body = item.entries.map(([k, v]) => `${JSON.stringify(k)}:${stringifyJson(v)}`).join(",");
        return `\u0000${literals.push(`{${body}}`) - 1}\u0000`;
      }
      return item;
    },
    indent,
  );
  return text.replace(/"\\u0000(\d+)\\u0000"/g, (_match, index: string) => literals[Number(index)]!);
}

/** Where parsing found a problem. */
export class JsonInputError extends Error {
  override name = "JsonInputError";
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

/** Deepest nesting of objects and arrays a body may have: bounded so that nothing recurses past the stack. */
export const MAX_JSON_DEPTH = 64;

/** The key order of the objects in a parsed document, by path from the root. */
export type KeyOrder = (path: readonly string[]) => string[] | undefined;

/** Key orders of parsed documents (JSON.parse puts integer-like keys first, and objects built from it may lose `__proto__`). */
const KEY_ORDERS = new WeakMap<object, KeyOrder>();

/**
 * The keys of the object at `path` in `root` as they appeared in its JSON text: every key,
 * `__proto__`, `constructor` and integer-like ones included, in document order. For values not
 * parsed by {@link parseJsonStrict}, the object's own keys.
 */
export function orderedKeys(root: unknown, path: readonly string[]): string[] {
  const order = typeof root === "object" && root !== null ? KEY_ORDERS.get(root) : undefined;
  const fromText = order?.(path);
  if (fromText) return fromText;
  let node: unknown = root;
  for (const key of path) node = ownValue(node, key);
  return typeof node === "object" && node !== null ? Object.keys(node) : [];
}

/** The own property `key` of `node` (so `__proto__` reads the data, never the prototype). */
export function ownValue(node: unknown, key: string): unknown {
  if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
  return Object.getOwnPropertyDescriptor(node, key)?.value;
}

/**
 * Parses JSON text, rejecting syntax errors, objects that repeat a key (the error names the
 * path of the repeated key, e.g. `questions.intent.criteria.refund`) and nesting deeper than
 * `maxDepth`. Remembers the document order of every object's keys for {@link orderedKeys}.
 */
/**
 * The first structural problem of JSON text that JSON.parse accepts silently: an object that
 * repeats a key, or nesting deeper than `maxDepth`. For callers that parse the text themselves.
 */
export function jsonStructureProblem(text: string, maxDepth = MAX_JSON_DEPTH): JsonInputError | undefined {
  try {
    const { duplicate } = scanJson(text, maxDepth);
    return duplicate
      ? new JsonInputError(`duplicate key "${duplicate.key}" in the same object`, duplicate.path)
      : undefined;
  } catch (error) {
    if (error instanceof JsonInputError) return error;
    throw error;
  }
}

export function parseJsonStrict(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  // The scan runs first: it is iterative, so a body nested 10,000 deep is refused, not recursed into.
  const scan = scanJson(text, maxDepth);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new JsonInputError(`the body is not valid JSON: ${(error as Error).message}`);
  }
  if (scan.duplicate)
    throw new JsonInputError(`duplicate key "${scan.duplicate.key}" in the same object`, scan.duplicate.path);
  if (typeof value === "object" && value !== null) {
    const keys = scan.keys;
    KEY_ORDERS.set(value, (path) => keys.get(path.join("\u0000")));
  }
  return value;
}

/** Object paths are remembered this deep (questions.<key>.criteria is 3). */
const KEY_ORDER_DEPTH = 4;

/**
 * Scans JSON text once: the first object that repeats a key, and each shallow object's keys in
 * document order. Syntax errors are left to JSON.parse; a malformed text only yields a partial scan.
 */
function scanJson(
  text: string,
  maxDepth: number,
): { duplicate?: { key: string; path: string }; keys: Map<string, string[]> } {
  type Frame = { keys: string[] | undefined; seen: Set<string> | undefined; name: string; index: number };
  const stack: Frame[] = [];
  const keys = new Map<string, string[]>();
  let duplicate: { key: string; path: string } | undefined;
  let pendingKey: string | undefined;
  const names = () => stack.slice(1).map((f) => f.name);
  const pathOf = (key: string) => [...names(), key].filter(Boolean).join(".");
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      let escaped = false;
      while (end < text.length && text[end] !== '"') {
        if (text[end] === "\\") {
          escaped = true;
          end += 2;
        } else end++;
      }
      const frame = stack.at(-1);
      let next = end + 1;
      while (next < text.length && isJsonSpace(text.charCodeAt(next))) next++;
      if (frame?.seen && text[next] === ":") {
        let key: string;
        try {
          key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        } catch {
          return { keys }; // not JSON: JSON.parse reports it
        }
        if (frame.seen.has(key)) duplicate ??= { key, path: pathOf(key) };
        frame.seen.add(key);
        frame.keys?.push(key);
        pendingKey = key;
      }
      i = end;
    } else if (char === "{" || char === "[") {
      const parent = stack.at(-1);
      const name = parent?.seen ? (pendingKey ?? "") : parent ? String(parent.index) : "";
      if (stack.length >= maxDepth) {
        const where = [...names(), name].filter(Boolean).slice(0, 8).join(".");
        throw new JsonInputError(`the body is nested more than ${maxDepth} levels deep`, where || undefined);
      }
      const isObject = char === "{";
      stack.push({
        keys: isObject && stack.length <= KEY_ORDER_DEPTH ? [] : undefined,
        seen: isObject ? new Set() : undefined,
        name,
        index: 0,
      });
      pendingKey = undefined;
    } else if (char === "}" || char === "]") {
      const frame = stack.pop();
      if (frame?.keys)
        keys.set(
          stack.length === 0 ? "" : [...stack.slice(1).map((f) => f.name), frame.name].join("\u0000"),
          frame.keys,
        );
    } else if (char === ",") {
      const frame = stack.at(-1);
      if (frame && !frame.seen) frame.index++;
    }
  }
  return { ...(duplicate ? { duplicate } : {}), keys };
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isJsonSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

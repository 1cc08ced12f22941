/**
 * JSON in and out of the endpoint and the pipeline: floats that always carry a decimal point (strict clients
 * reject `0` where they expect a probability), and parsing that refuses duplicate object keys
 * (JSON.parse silently keeps the last, which would hide a duplicated option id).
 */

import { JsonInputError } from "./json-error.ts";
import { type JsonDuplicate, type JsonScan, scanJson, scanJsonInSlices } from "./json-scan.ts";

export { JsonInputError } from "./json-error.ts";

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

/** The error for a repeated key, its path given from `from` (a sub-document's root) down. */
export function duplicateKeyError(duplicate: JsonDuplicate, from: readonly string[] = []): JsonInputError {
  const path = [...duplicate.at.slice(from.length), duplicate.key].filter(Boolean).join(".");
  return new JsonInputError(`duplicate key "${duplicate.key}" in the same object`, path);
}

/**
 * The first structural problem of JSON text that JSON.parse accepts silently: an object that
 * repeats a key, or nesting deeper than `maxDepth`. For callers that parse the text themselves.
 */
export function jsonStructureProblem(text: string, maxDepth = MAX_JSON_DEPTH): JsonInputError | undefined {
  try {
    const [duplicate] = scanJson(text, maxDepth).duplicates;
    return duplicate ? duplicateKeyError(duplicate) : undefined;
  } catch (error) {
    if (error instanceof JsonInputError) return error;
    throw error;
  }
}

/** A parsed document, with the repeated keys it holds; see {@link parseJsonDocument}. */
export interface JsonDocument {
  readonly value: unknown;
  /** Every object that repeats a key (the first `MAX_DUPLICATES_REPORTED`). */
  readonly duplicates: readonly JsonDuplicate[];
  /** Remembers the key order of the sub-document at `root` (`["batch", "0"]`) for {@link orderedKeys}. */
  keyOrderFrom(root: readonly string[]): void;
}

/**
 * Parses JSON text, rejecting syntax errors and nesting deeper than `maxDepth`, and reports the
 * objects that repeat a key rather than refusing the document, so that a caller whose document
 * holds several requests (a batch) refuses only the request a repeat is in. Remembers the
 * document order of every shallow object's keys for {@link orderedKeys}.
 */
export function parseJsonDocument(text: string, maxDepth = MAX_JSON_DEPTH): JsonDocument {
  // The scan runs first: it is iterative, so a body nested 10,000 deep is refused, not recursed into.
  return documentOf(text, scanJson(text, maxDepth));
}

/**
 * {@link parseJsonDocument} for a server: the scan awaits `pause()` between slices of the text,
 * so a large body (megabytes) leaves room for other requests while it is read. JSON.parse
 * itself runs in one piece, with a pause after it.
 */
export async function parseJsonDocumentInSlices(
  text: string,
  pause: () => Promise<void>,
  maxDepth = MAX_JSON_DEPTH,
): Promise<JsonDocument> {
  const document = documentOf(text, await scanJsonInSlices(text, maxDepth, pause));
  // What follows (validation, the prompt) is a piece of its own, after JSON.parse's.
  await pause();
  return document;
}

function documentOf(text: string, scan: JsonScan): JsonDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new JsonInputError(`the body is not valid JSON: ${(error as Error).message}`);
  }
  const keyOrderFrom = (root: readonly string[]) => {
    let node: unknown = value;
    for (const key of root) node = ownValue(node, key);
    if (typeof node === "object" && node !== null)
      KEY_ORDERS.set(node, (path) => scan.keys.get([...root, ...path].join("\u0000")));
  };
  keyOrderFrom([]);
  return { value, duplicates: scan.duplicates, keyOrderFrom };
}

/**
 * Parses JSON text, rejecting syntax errors, objects that repeat a key (the error names the
 * path of the repeated key, e.g. `questions.intent.criteria.refund`) and nesting deeper than
 * `maxDepth`. Remembers the document order of every object's keys for {@link orderedKeys}.
 */
export function parseJsonStrict(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  const { value, duplicates } = parseJsonDocument(text, maxDepth);
  if (duplicates[0]) throw duplicateKeyError(duplicates[0]);
  return value;
}

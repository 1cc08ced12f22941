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

/** JSON.stringify that writes {@link JsonFloat} values as float literals. */
export function stringifyJson(value: unknown, indent?: number): string {
  const floats: string[] = [];
  const text = JSON.stringify(
    value,
    (_key, item: unknown) =>
      item instanceof JsonFloat ? `\u0000${floats.push(formatFloat(item.value)) - 1}\u0000` : item,
    indent,
  );
  return text.replace(/"\\u0000(\d+)\\u0000"/g, (_match, index: string) => floats[Number(index)]!);
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

/**
 * Parses JSON text, rejecting syntax errors and objects that repeat a key; the error names the
 * path of the repeated key (e.g. `questions.intent.criteria.refund`).
 */
export function parseJsonStrict(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new JsonInputError(`the body is not valid JSON: ${(error as Error).message}`);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate)
    throw new JsonInputError(`duplicate key "${duplicate.key}" in the same object`, duplicate.path);
  return value;
}

/** Scans valid JSON text for an object that repeats a key; returns the first one found. */
function findDuplicateKey(text: string): { key: string; path: string } | undefined {
  type Frame = { keys: Set<string> | undefined; name: string; index: number };
  const stack: Frame[] = [];
  let pendingKey: string | undefined;
  const pathOf = (key: string) => [...stack.slice(1).map((f) => f.name), key].filter(Boolean).join(".");
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const frame = stack.at(-1);
      let next = end + 1;
      while (/\s/.test(text[next] ?? "")) next++;
      if (frame?.keys && text[next] === ":") {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (frame.keys.has(key)) return { key, path: pathOf(key) };
        frame.keys.add(key);
        pendingKey = key;
      }
      i = end;
    } else if (char === "{" || char === "[") {
      const parent = stack.at(-1);
      const name = parent?.keys ? (pendingKey ?? "") : parent ? String(parent.index) : "";
      stack.push({ keys: char === "{" ? new Set() : undefined, name, index: 0 });
      pendingKey = undefined;
    } else if (char === "}" || char === "]") {
      stack.pop();
    } else if (char === ",") {
      const frame = stack.at(-1);
      if (frame && !frame.keys) frame.index++;
    }
  }
  return undefined;
}

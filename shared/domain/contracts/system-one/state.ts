/**
 * The one rule on a request's state: the evidence is a non-empty string, object or array, and
 * holds only what JSON can carry (finite numbers; no bigint, function or symbol from a caller
 * in process). A problem names the path inside the state, `state.rows.1`.
 */

/** Makes the error for a state problem at `param`. */
export type StateProblem = (param: string, problem: string, code: "invalid_decision") => Error;

/** Throws `fail(...)` for the first problem of `state`. */
export function checkState(state: unknown, fail: StateProblem): void {
  if (typeof state === "string") {
    if (state.trim().length === 0) throw fail("state", "must not be empty", "invalid_decision");
    return;
  }
  if (state === null || typeof state !== "object")
    throw fail("state", "must be a string, an object or an array", "invalid_decision");
  const entries = Array.isArray(state) ? state.length : Object.keys(state).length;
  if (entries === 0) throw fail("state", "must not be empty", "invalid_decision");
  checkValues(state, "state", fail);
}

/** A container still to be walked, and how to name its path should one of its values be refused. */
interface Pending {
  readonly value: object;
  readonly parent: Pending | undefined;
  readonly key: string;
}

/** `state.rows.1`: the path of `key` inside `node`, built only when a value is refused. */
function pathOf(node: Pending | undefined, key: string): string {
  const keys = [key];
  for (let at = node; at; at = at.parent) keys.push(at.key);
  return keys.reverse().join(".");
}

/**
 * Walks every value once, iteratively and without allocating per value (a 5.8 MB array of
 * numbers once took seconds here, building a path string for each element, while the event loop
 * waited: the endpoint's /ping with it), and throws for the first one JSON cannot carry.
 */
function checkValues(root: object, param: string, fail: StateProblem): void {
  const stack: Pending[] = [{ value: root, parent: undefined, key: param }];
  for (let node = stack.pop(); node; node = stack.pop()) {
    const container = node.value as Record<string, unknown>;
    const keys = Array.isArray(container) ? undefined : Object.keys(container);
    const count = keys ? keys.length : (container as unknown as unknown[]).length;
    for (let i = 0; i < count; i++) {
      const key = keys ? keys[i]! : i;
      // The own property: a `__proto__` key parsed from JSON is data, never the prototype.
      const value =
        key === "__proto__" ? Object.getOwnPropertyDescriptor(container, key)?.value : container[key];
      const type = typeof value;
      if (type === "string" || type === "boolean" || value === null || type === "undefined") continue;
      if (type === "number") {
        if (!Number.isFinite(value))
          throw fail(pathOf(node, String(key)), `holds a non-finite number (${value})`, "invalid_decision");
      } else if (type === "object") stack.push({ value: value as object, parent: node, key: String(key) });
      else
        throw fail(pathOf(node, String(key)), `holds a ${type}, which JSON cannot carry`, "invalid_decision");
    }
  }
}

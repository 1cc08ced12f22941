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

function checkValues(value: unknown, param: string, fail: StateProblem): void {
  if (typeof value === "number" && !Number.isFinite(value))
    throw fail(param, `holds a non-finite number (${value})`, "invalid_decision");
  if (typeof value === "bigint" || typeof value === "function" || typeof value === "symbol")
    throw fail(param, `holds a ${typeof value}, which JSON cannot carry`, "invalid_decision");
  if (typeof value !== "object" || value === null) return;
  for (const [key, item] of Object.entries(value)) checkValues(item, `${param}.${key}`, fail);
}

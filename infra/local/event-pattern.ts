/**
 * EventBridge event patterns: the matcher behind the local event bus, and the check that the
 * CDK rules' patterns match the sample events (so local and cloud routing cannot drift apart).
 *
 * Supported: exact values (strings, numbers, booleans, null), `prefix`, `suffix`,
 * `anything-but` (a value, a list, or a prefix/suffix/equals-ignore-case/wildcard),
 * `numeric` ranges, `exists`, `equals-ignore-case`, `wildcard` and `$or`. An array in the event
 * matches when any of its elements matches.
 */

/** A pattern object, as EventBridge takes it. */
export type EventPattern = { readonly [key: string]: unknown };

/** The pattern is not one EventBridge would accept. */
export class InvalidPatternError extends Error {
  override name = "InvalidPatternError";
}

const NUMERIC_OPERATORS = new Set(["<", "<=", "=", ">", ">="]);

/** Whether `event` matches `pattern`. Throws {@link InvalidPatternError} on a malformed pattern. */
export function matchesPattern(pattern: EventPattern, event: unknown): boolean {
  return matchObject(pattern, event, "");
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function matchObject(pattern: EventPattern, event: unknown, path: string): boolean {
  for (const [key, rule] of Object.entries(pattern)) {
    if (key === "$or") {
      if (!Array.isArray(rule) || rule.length < 2)
        throw new InvalidPatternError(`${path || "pattern"}.$or needs two or more patterns`);
      if (!rule.some((branch) => isPlainObject(branch) && matchObject(branch, event, path))) return false;
      continue;
    }
    const value = isPlainObject(event) ? event[key] : undefined;
    const present = isPlainObject(event) && Object.hasOwn(event, key);
    const where = path ? `${path}.${key}` : key;
    if (isPlainObject(rule)) {
      if (!present || !matchObject(rule, value, where)) return false;
    } else if (Array.isArray(rule)) {
      if (!matchLeaf(rule, value, present, where)) return false;
    } else {
      throw new InvalidPatternError(
        `${where}: a pattern value must be an array or an object, got ${JSON.stringify(rule)}`,
      );
    }
  }
  return true;
}

/** A leaf: the event value (or any element of it) must match one of the rules. */
function matchLeaf(rules: readonly unknown[], value: unknown, present: boolean, where: string): boolean {
  if (rules.length === 0) throw new InvalidPatternError(`${where}: an empty list matches nothing`);
  const values = Array.isArray(value) ? value : [value];
  return rules.some((rule) => {
    if (isPlainObject(rule) && "exists" in rule) {
      if (typeof rule.exists !== "boolean")
        throw new InvalidPatternError(`${where}: exists takes true or false`);
      return rule.exists === (present && !isPlainObject(value));
    }
    if (!present) return false;
    return values.some((item) => matchRule(rule, item, where));
  });
}

function matchRule(rule: unknown, value: unknown, where: string): boolean {
  if (!isPlainObject(rule)) return rule === value;
  const [operator, ...others] = Object.keys(rule);
  if (!operator || others.length > 0)
    throw new InvalidPatternError(`${where}: a rule object takes exactly one operator`);
  const operand = rule[operator];
  switch (operator) {
    case "prefix":
      return matchAffix(operand, value, where, (text, affix) => text.startsWith(affix));
    case "suffix":
      return matchAffix(operand, value, where, (text, affix) => text.endsWith(affix));
    case "equals-ignore-case":
      return (
        typeof operand === "string" &&
        typeof value === "string" &&
        operand.toLowerCase() === value.toLowerCase()
      );
    case "wildcard":
      if (typeof operand !== "string") throw new InvalidPatternError(`${where}: wildcard takes a string`);
      return typeof value === "string" && wildcardRegExp(operand).test(value);
    case "numeric":
      return matchNumeric(operand, value, where);
    case "anything-but":
      return matchAnythingBut(operand, value, where);
    case "cidr":
      throw new InvalidPatternError(`${where}: cidr is not supported by the local bus`);
    default:
      throw new InvalidPatternError(`${where}: unknown operator "${operator}"`);
  }
}

function matchAffix(
  operand: unknown,
  value: unknown,
  where: string,
  test: (text: string, affix: string) => boolean,
): boolean {
  if (typeof value !== "string") return false;
  if (typeof operand === "string") return test(value, operand);
  if (isPlainObject(operand) && typeof operand["equals-ignore-case"] === "string") {
    return test(value.toLowerCase(), operand["equals-ignore-case"].toLowerCase());
  }
  throw new InvalidPatternError(
    `${where}: prefix and suffix take a string or {"equals-ignore-case": string}`,
  );
}

function wildcardRegExp(pattern: string): RegExp {
  const escaped = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${escaped.join(".*")}$`, "s");
}

function matchNumeric(operand: unknown, value: unknown, where: string): boolean {
  if (!Array.isArray(operand) || operand.length === 0 || operand.length % 2 !== 0) {
    throw new InvalidPatternError(
      `${where}: numeric takes operator and number pairs, e.g. [">", 0, "<=", 5]`,
    );
  }
  if (typeof value !== "number") return false;
  for (let i = 0; i < operand.length; i += 2) {
    const op = operand[i];
    const bound = operand[i + 1];
    if (typeof op !== "string" || !NUMERIC_OPERATORS.has(op) || typeof bound !== "number") {
      throw new InvalidPatternError(`${where}: numeric operators are <, <=, =, >, >= followed by a number`);
    }
    const ok =
      op === "<"
        ? value < bound
        : op === "<="
          ? value <= bound
          : op === "="
            ? value === bound
            : op === ">"
              ? value > bound
              : value >= bound;
    if (!ok) return false;
  }
  return true;
}

function matchAnythingBut(operand: unknown, value: unknown, where: string): boolean {
  if (Array.isArray(operand)) return !operand.some((item) => item === value);
  if (isPlainObject(operand)) {
    const [operator] = Object.keys(operand);
    if (
      operator === "prefix" ||
      operator === "suffix" ||
      operator === "equals-ignore-case" ||
      operator === "wildcard"
    ) {
      if (typeof value !== "string") return false;
      const inner = operand[operator];
      const list = Array.isArray(inner) ? inner : [inner];
      return !list.some((item) => matchRule({ [operator]: item }, value, where));
    }
    throw new InvalidPatternError(
      `${where}: anything-but takes a value, a list, or prefix/suffix/equals-ignore-case/wildcard`,
    );
  }
  return operand !== value;
}

/**
 * EventBridge event patterns: the matcher behind the local event bus, and the check that the
 * CDK rules' patterns match the sample events (so local and cloud routing cannot drift apart).
 *
 * Supported: exact values (strings, numbers, booleans, null), `prefix`, `suffix`,
 * `anything-but` (a value, a list, or a prefix/suffix/equals-ignore-case/wildcard),
 * `numeric` ranges, `exists`, `equals-ignore-case`, `wildcard`, `cidr` (IPv4 and IPv6) and
 * `$or`. Arrays follow EventBridge: a leaf matches when any element of an array matches, and
 * arrays of objects are flattened, so each path in the pattern is matched against the values at
 * that path in every element (two fields may then match in different elements, as in
 * EventBridge). `test/infra/event-pattern-moto.test.ts` cross-checks this matcher against moto.
 */

import { isIP } from "node:net";

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

/**
 * Matches `pattern` against every node at this level: objects reached through arrays of objects
 * are all candidates, and each key gathers its values across them (EventBridge's flattening).
 */
function matchObject(pattern: EventPattern, event: unknown, path: string): boolean {
  return matchNodes(pattern, flatten([event]).filter(isPlainObject), path);
}

function flatten(values: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  const stack = [...values].reverse();
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) stack.push(...[...value].reverse());
    else out.push(value);
  }
  return out;
}

function matchNodes(pattern: EventPattern, nodes: readonly Record<string, unknown>[], path: string): boolean {
  for (const [key, rule] of Object.entries(pattern)) {
    if (key === "$or") {
      if (!Array.isArray(rule) || rule.length < 2)
        throw new InvalidPatternError(`${path || "pattern"}.$or needs two or more patterns`);
      if (!rule.some((branch) => isPlainObject(branch) && matchNodes(branch, nodes, path))) return false;
      continue;
    }
    const values = flatten(nodes.filter((node) => Object.hasOwn(node, key)).map((node) => node[key]));
    const where = path ? `${path}.${key}` : key;
    if (isPlainObject(rule)) {
      // With no object here every path below is absent: only `exists: false` can still match.
      if (!matchNodes(rule, values.filter(isPlainObject), where)) return false;
    } else if (Array.isArray(rule)) {
      // Objects are not leaves: a leaf rule sees only the scalar values at this path.
      if (
        !matchLeaf(
          rule,
          values.filter((v) => !isPlainObject(v)),
          where,
        )
      )
        return false;
    } else {
      throw new InvalidPatternError(
        `${where}: a pattern value must be an array or an object, got ${JSON.stringify(rule)}`,
      );
    }
  }
  return true;
}

/** A leaf: any of the values at the path must match one of the rules. */
function matchLeaf(rules: readonly unknown[], values: readonly unknown[], where: string): boolean {
  if (rules.length === 0) throw new InvalidPatternError(`${where}: an empty list matches nothing`);
  return rules.some((rule) => {
    if (isPlainObject(rule) && "exists" in rule) {
      if (typeof rule.exists !== "boolean")
        throw new InvalidPatternError(`${where}: exists takes true or false`);
      return rule.exists === values.length > 0;
    }
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
      if (typeof operand !== "string") throw new InvalidPatternError(`${where}: cidr takes a string`);
      return typeof value === "string" && inCidr(value, operand, where);
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

/** The bytes of an IPv4 or IPv6 address, or undefined when `text` is neither. */
function addressBytes(text: string): number[] | undefined {
  if (isIP(text) === 4) return text.split(".").map(Number);
  if (isIP(text) !== 6) return undefined;
  let address = text.toLowerCase();
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split(".").map(Number) as [number, number, number, number];
    address = `${address.slice(0, -v4[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = address.split("::") as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.flatMap((group) => {
    const n = Number.parseInt(group || "0", 16);
    return [n >> 8, n & 0xff];
  });
}

function inCidr(value: string, cidr: string, where: string): boolean {
  const [network, bitsText] = cidr.split("/");
  const networkBytes = addressBytes(network ?? "");
  const bits = Number(bitsText);
  if (!networkBytes || !Number.isInteger(bits) || bits < 0 || bits > networkBytes.length * 8) {
    throw new InvalidPatternError(`${where}: cidr takes an IPv4 or IPv6 network such as 10.0.0.0/24`);
  }
  const bytes = addressBytes(value);
  if (!bytes || bytes.length !== networkBytes.length) return false;
  for (let bit = 0; bit < bits; bit++) {
    const mask = 0x80 >> (bit % 8);
    if ((bytes[bit >> 3]! & mask) !== (networkBytes[bit >> 3]! & mask)) return false;
  }
  return true;
}

/**
 * Items: what upstream systems send for a decision. Validated strictly, with every problem named,
 * and limited in size (SQS carries at most 256 KiB per message).
 */

import { z } from "zod";
import { BATCH_ID_PATTERN } from "./batch.ts";
import { jsonStructureProblem, ownValue } from "./contracts/json.ts";

/** Largest item, serialized, in bytes (the SQS message limit). */
export const MAX_ITEM_BYTES = 256 * 1024;

/** Deepest nesting of objects and arrays in a state or metadata (DynamoDB's own map limit is 32). */
export const MAX_ITEM_DEPTH = 32;

/** Allowed item ids: the upstream key, also the idempotency key together with the policy version. */
export const ITEM_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

/** What a JSON value is, for messages: "a number", "an array", "null". */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** A zod message for a value that is missing or of the wrong type: what was needed, what came. */
const needs =
  (what: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? `required, ${what}` : `must be ${what}, got ${kindOf(issue.input)}`;

const stateSchema = z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())], {
  error: needs("a string, an object or an array"),
});

const ITEM_FIELDS = ["id", "policy", "state", "metadata", "redecide", "batchId"] as const;

export const itemSchema = z.strictObject(
  {
    id: z
      .string({ error: needs("a non-empty string") })
      .regex(
        ITEM_ID_PATTERN,
        "must be 1 to 128 characters: letters, digits and . _ : / -, starting with a letter or digit",
      ),
    policy: z.string({ error: needs("the id of a policy") }).min(1, "must name a policy"),
    state: stateSchema,
    metadata: z.record(z.string(), z.unknown(), { error: needs("an object") }).optional(),
    /**
     * Decide again under the policy's current version although an earlier version decided this
     * item (a deliberate re-decision; without it a duplicate is never decided twice).
     */
    redecide: z.boolean({ error: needs("true or false") }).optional(),
    /** The batch the item came in (set by batch intake; counted in the batch's progress). */
    batchId: z
      .string({ error: needs("a batch id") })
      .regex(BATCH_ID_PATTERN, "must be a batch id (b- and 6 to 60 lowercase letters, digits or dashes)")
      .optional(),
  },
  {
    error: (issue) => {
      if (issue.code === "unrecognized_keys")
        return `unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(", ")} (an item has ${ITEM_FIELDS.join(", ")})`;
      if (issue.code === "invalid_type") return `must be a JSON object, got ${kindOf(issue.input)}`;
      return undefined;
    },
  },
);

/** An item to decide. */
export type Item = z.infer<typeof itemSchema>;

/** One problem with an item. */
export interface ItemProblem {
  readonly field: string;
  readonly message: string;
}

/** The outcome of {@link parseItem}. */
export type ItemParse =
  | { readonly ok: true; readonly item: Item }
  | { readonly ok: false; readonly problems: ItemProblem[]; readonly id?: string };

/** Whether a state is empty (an empty string, object or array). */
function isEmptyState(state: unknown): boolean {
  if (typeof state === "string") return state.trim().length === 0;
  if (Array.isArray(state)) return state.length === 0;
  return typeof state === "object" && state !== null && Object.keys(state).length === 0;
}

/**
 * Parses an item from its JSON text, collecting every problem rather than the first. When the
 * id itself is readable it is returned with the problems, so the rejection can be recorded.
 */
export function parseItem(text: string, knownPolicy?: (id: string) => boolean): ItemParse {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_ITEM_BYTES) {
    return {
      ok: false,
      problems: [{ field: "item", message: `is ${bytes} bytes; the limit is ${MAX_ITEM_BYTES}` }],
      ...idOf(text),
    };
  }
  let json: unknown;
  const problems: ItemProblem[] = [];
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      problems: [{ field: "item", message: `is not valid JSON: ${(error as Error).message}` }],
    };
  }
  // JSON.parse keeps the last of two equal keys: an item must not mean two things.
  const structure = jsonStructureProblem(text);
  if (structure) problems.push({ field: structure.param ?? "item", message: structure.message });
  const parsed = itemSchema.safeParse(json);
  if (!parsed.success) {
    problems.push(
      ...parsed.error.issues.map((issue) => ({
        field: issue.path.join(".") || "item",
        message: issue.message,
      })),
    );
  } else {
    // The values JSON.parse made, not zod's copies: a copy drops a `__proto__` key (and so the
    // subtree under it, which the checks would not see, or the only key of a state).
    const state = ownValue(json, "state");
    const metadata = ownValue(json, "metadata");
    problems.push(...structureProblems("state", state));
    if (metadata !== undefined) problems.push(...structureProblems("metadata", metadata));
    if (isEmptyState(state)) problems.push({ field: "state", message: "must not be empty" });
    if (knownPolicy && !knownPolicy(parsed.data.policy)) {
      problems.push({ field: "policy", message: `unknown policy "${parsed.data.policy}"` });
    }
  }
  if (problems.length > 0 || !parsed.success) {
    const id = (json as { id?: unknown } | null)?.id;
    // With two "id" keys the item has no one id: the rejection is recorded under its hash.
    const readable =
      typeof id === "string" && ITEM_ID_PATTERN.test(id) && !problems.some((p) => p.field === "id");
    return { ok: false, problems, ...(readable ? { id } : {}) };
  }
  // zod rebuilds records by assignment, which drops a `__proto__` key: the item keeps the values
  // JSON.parse made, where such a key is plain data (an own property, never the prototype).
  const source = json as Record<string, unknown>;
  const metadata = ownValue(source, "metadata") as Item["metadata"];
  return {
    ok: true,
    item: {
      ...parsed.data,
      state: ownValue(source, "state") as Item["state"],
      ...(metadata ? { metadata } : {}),
    },
  };
}

function idOf(text: string): { id?: string } {
  const match = /"id"\s*:\s*"([^"]{1,128})"/.exec(text.slice(0, 4096));
  return match && ITEM_ID_PATTERN.test(match[1]!) ? { id: match[1]! } : {};
}

/**
 * Limits a value must meet to be decided and stored faithfully: nesting at most
 * {@link MAX_ITEM_DEPTH} deep, and integers within ±2^53 (beyond that JSON.parse has already
 * rounded them, so the decision would be about another number). Iterative: no recursion to overflow.
 */
export function structureProblems(field: string, value: unknown): ItemProblem[] {
  const problems: ItemProblem[] = [];
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: field, depth: 0 }];
  while (stack.length > 0 && problems.length < 10) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === "number" && Number.isInteger(current) && !Number.isSafeInteger(current)) {
      problems.push({
        field: path,
        message: `integer ${current} is beyond ±2^53 and loses precision in JSON; send it as a string`,
      });
    } else if (typeof current === "object" && current !== null) {
      if (depth >= MAX_ITEM_DEPTH) {
        problems.push({ field: path, message: `is nested more than ${MAX_ITEM_DEPTH} levels deep` });
        continue;
      }
      for (const [key, child] of Object.entries(current)) {
        stack.push({ value: child, path: `${path}.${key}`, depth: depth + 1 });
      }
    }
  }
  return problems;
}

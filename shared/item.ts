/**
 * Items: what upstream systems send for a decision. Validated strictly, with every problem named,
 * and limited in size (SQS carries at most 256 KiB per message).
 */
import { z } from "zod";

/** Largest item, serialized, in bytes (the SQS message limit). */
export const MAX_ITEM_BYTES = 256 * 1024;

/** Allowed item ids: the upstream key, also the idempotency key together with the policy version. */
export const ITEM_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

const stateSchema = z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]);

const itemSchema = z
  .object({
    id: z
      .string()
      .regex(
        ITEM_ID_PATTERN,
        "must be 1 to 128 characters: letters, digits and . _ : / -, starting with a letter or digit",
      ),
    policy: z.string().min(1, "must name a policy"),
    state: stateSchema,
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

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
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      problems: [{ field: "item", message: `is not valid JSON: ${(error as Error).message}` }],
    };
  }
  const parsed = itemSchema.safeParse(json);
  const problems: ItemProblem[] = parsed.success
    ? []
    : parsed.error.issues.map((issue) => ({ field: issue.path.join(".") || "item", message: issue.message }));
  if (parsed.success) {
    if (isEmptyState(parsed.data.state)) problems.push({ field: "state", message: "must not be empty" });
    if (knownPolicy && !knownPolicy(parsed.data.policy)) {
      problems.push({ field: "policy", message: `unknown policy "${parsed.data.policy}"` });
    }
  }
  if (problems.length > 0 || !parsed.success) {
    const id = (json as { id?: unknown } | null)?.id;
    return { ok: false, problems, ...(typeof id === "string" && ITEM_ID_PATTERN.test(id) ? { id } : {}) };
  }
  return { ok: true, item: parsed.data };
}

function idOf(text: string): { id?: string } {
  const match = /"id"\s*:\s*"([^"]{1,128})"/.exec(text.slice(0, 4096));
  return match && ITEM_ID_PATTERN.test(match[1]!) ? { id: match[1]! } : {};
}

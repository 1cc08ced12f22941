/**
 * Batched invocations: `{"batch": [request, ...]}` in one `/invocations` call (what the decide
 * function sends for one SQS batch), answered `{"results": [{"status", "body"}, ...]}` in the
 * same order, one answer or one error per item. Items are scored grouped by their questions and
 * layout (first appearance order), so items under one policy follow each other and share its
 * cached preamble; one item's error never fails the others.
 */
import { duplicateKeyError, type JsonDocument } from "../../shared/domain/contracts/json.ts";
import { ApiError, invalidField, toApiError } from "./api-error.ts";

/** Most items one batched call may carry (10 from an SQS batch, with room). */
export const MAX_BATCH_ITEMS = 32;

/** One item's answer: an HTTP status and the body a single call would have had. */
export interface BatchResult {
  readonly status: number;
  readonly body: unknown;
}

/** Whether a body is a batch. */
export function isBatchBody(body: unknown): body is { batch: unknown } {
  return typeof body === "object" && body !== null && "batch" in body;
}

/** The order to score in: items with the same questions and layout together, stable. */
export function groupedOrder(items: readonly unknown[]): number[] {
  const keyOf = (item: unknown) => {
    if (typeof item !== "object" || item === null) return "";
    const { questions, layout, system } = item as Record<string, unknown>;
    return JSON.stringify([questions, layout, system]);
  };
  const firstSeen = new Map<string, number>();
  const keys = items.map((item, i) => {
    const key = keyOf(item);
    if (!firstSeen.has(key)) firstSeen.set(key, i);
    return firstSeen.get(key)!;
  });
  return items.map((_, i) => i).sort((a, b) => keys[a]! - keys[b]! || a - b);
}

/** An invocation's body, with the errors of the batch items refused while it was parsed, by index. */
export interface Invocation {
  readonly body: unknown;
  readonly refused: ReadonlyMap<number, ApiError>;
}

/**
 * The invocation a parsed document stands for. A key repeated inside one item of a batch
 * refuses that item alone (with the error, and the path within the item, a single call would
 * have had); a repeat anywhere else refuses the call. Each item keeps its keys' document order.
 */
export function batchDocument(document: JsonDocument): Invocation {
  const { value, duplicates } = document;
  const items = isBatchBody(value) ? value.batch : undefined;
  if (!Array.isArray(items)) {
    if (duplicates[0]) throw duplicateKeyError(duplicates[0]);
    return { body: value, refused: new Map() };
  }
  const refused = new Map<number, ApiError>();
  for (const duplicate of duplicates) {
    const [field, index] = duplicate.at;
    const i = Number(index);
    if (field !== "batch" || !Number.isInteger(i) || i < 0 || i >= items.length)
      throw duplicateKeyError(duplicate);
    if (!refused.has(i)) refused.set(i, toApiError(duplicateKeyError(duplicate, ["batch", String(i)])));
  }
  for (let i = 0; i < items.length; i++) document.keyOrderFrom(["batch", String(i)]);
  return { body: value, refused };
}

/** Scores every item of a batch with `scoreOne`, one result per item in the request's order. */
export async function scoreBatch(
  body: { batch: unknown },
  scoreOne: (item: unknown) => Promise<unknown>,
  refused: ReadonlyMap<number, ApiError> = new Map(),
): Promise<{ results: BatchResult[] }> {
  const items = body.batch;
  if (!Array.isArray(items) || items.length === 0)
    throw invalidField("batch", "batch must be a non-empty array of System One requests");
  if (items.length > MAX_BATCH_ITEMS)
    throw invalidField("batch", `batch holds ${items.length} items; at most ${MAX_BATCH_ITEMS} per call`);
  const results: BatchResult[] = new Array(items.length);
  for (const index of groupedOrder(items)) {
    const early = refused.get(index);
    if (early) {
      results[index] = { status: early.status, body: early.body() };
      continue;
    }
    try {
      results[index] = { status: 200, body: await scoreOne(items[index]) };
    } catch (error) {
      const api = error instanceof ApiError ? error : toApiError(error);
      results[index] = { status: api.status, body: api.body() };
    }
  }
  return { results };
}

/**
 * What an item's message body names before it parses as an item: its batch and its policy, read
 * leniently so that an invalid item's rejection is still counted in its batch and filed under its
 * policy (the decide step, and the failures that never reach it: dead letters, the async lane's).
 */
import { BATCH_ID_PATTERN } from "../domain/batch.ts";

/** The batch id an unparseable item names, if it names a valid one. */
export function batchOf(body: string): string | undefined {
  try {
    const batchId = (JSON.parse(body) as { batchId?: unknown }).batchId;
    return typeof batchId === "string" && BATCH_ID_PATTERN.test(batchId) ? batchId : undefined;
  } catch {
    return undefined;
  }
}

/** The policy an unparseable item names, if it names one, for the rejection record. */
export function policyOf(body: string): string {
  try {
    const policy = (JSON.parse(body) as { policy?: unknown }).policy;
    return typeof policy === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(policy) ? policy : "unknown";
  } catch {
    return "unknown";
  }
}

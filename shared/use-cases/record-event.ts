/**
 * A decision record's event, and its publishing under the record's lease: the one event a record
 * stands for (the same record always gives the same event id), sent once the record holds the
 * right to send it. The decide step, the outbox repair, replay and the targets' event authority
 * all read a record's event from here.
 */
import { actingTier } from "../domain/cascade.ts";
import type { Clock } from "../domain/clock.ts";
import { publishedEvent } from "../domain/contracts/events.ts";
import { type DecisionRecord, fieldOf } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import { DetailType, type PipelineEvent, type PublishesEvents } from "../domain/events.ts";

/** What {@link ensurePublished} needs (a part of the decide step's dependencies). */
export interface PublishDependencies {
  readonly store: DecisionStore;
  readonly publisher: PublishesEvents;
  /** How long a worker holds the right to publish. */
  readonly publishLeaseMs: number;
  readonly now: Clock;
}

/** The event a record stands for; the same record always gives the same event id. */
export function eventFor(record: DecisionRecord): PipelineEvent {
  const key = `${record.itemId}|${record.policyId}@${record.policyVersion}`;
  if (record.status === "rejected") {
    return publishedEvent(DetailType.rejected, `rejected|${key}`, {
      itemId: record.itemId,
      policyId: record.policyId,
      problems: record.problems ?? [],
      rejectedAt: record.createdAt,
    });
  }
  return publishedEvent(DetailType.made, `made|${key}|${record.route}|${record.chosen}`, {
    itemId: record.itemId,
    policyId: record.policyId,
    policyVersion: record.policyVersion,
    route: fieldOf(record, "route"),
    reason: fieldOf(record, "reason"),
    chosen: fieldOf(record, "chosen"),
    topProbability: fieldOf(record, "topProbability"),
    confidence: fieldOf(record, "confidence"),
    distribution: fieldOf(record, "distribution"),
    modelSha256: fieldOf(record, "modelSha256"),
    promptSha256: fieldOf(record, "promptSha256"),
    decidedAt: record.createdAt,
    ...(record.tiers ? { tier: actingTier(record.tiers) } : {}),
    ...(record.supersedes ? { supersedes: record.supersedes } : {}),
  });
}

/**
 * Publishes the record's event unless it went out already or another worker holds the lease.
 * `leaseHeld`: this worker created the record holding the lease, so no claim is needed. False
 * when another worker holds the lease (the event is that worker's to send, or this step's again
 * once the lease has passed).
 */
export async function ensurePublished(
  record: DecisionRecord,
  deps: PublishDependencies,
  leaseHeld = false,
): Promise<boolean> {
  if (record.eventPublished) return true;
  const now = deps.now();
  if (!leaseHeld && !(await deps.store.claimPublish(record, deps.publishLeaseMs, now.getTime())))
    return false;
  await deps.publisher.publish([eventFor(record)]);
  await deps.store.markPublished(record, now);
  return true;
}

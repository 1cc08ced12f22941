/**
 * Decides one queued message, with exactly-once effects under at-least-once delivery:
 *
 * 1. invalid items become a `rejected` record and a "Decision Rejected" event (never retried);
 * 2. an item already decided under this policy, under any version, is not decided again: its
 *    record is read back and its event published if a crash left it unpublished (the outbox
 *    repair). Only an item that says `"redecide": true` is decided again under a newer version,
 *    and its "Decision Made" names the decision it supersedes;
 * 3. otherwise the endpoint scores it, the policy's temperature calibrates it, routing picks
 *    auto or human (an automatable decision keeps its audit band and inclusion probability; the
 *    policy's shadow candidate, for items in its sample, is scored beside the live call and stored,
 *    never acted on), the record is written conditionally (a lost race adopts the winner's record),
 *    and "Decision Made" is published under a lease.
 *
 * Events go out at least once: PutEvents can succeed and the write that marks the record
 * published fail, and the event is then sent again once the lease expires. Every event carries a
 * stable `eventId`, and every target applies an event at most once by it.
 *
 * Permanent failures (the endpoint or the store refusing the item) reject it on first delivery
 * with the reason. Transient ones (throttling, timeouts, 5xx, an answer that breaks the contract)
 * are thrown: the message returns to the queue and, after its receive limit, to the dead-letter
 * queue.
 */

import { createHash } from "node:crypto";
import { predictionSet } from "../domain/calibration/conformal.ts";
import type { Clock } from "../domain/clock.ts";
import type { DecidesItems } from "../domain/decision-endpoint.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import { EndpointRejectedError, EventOwedError, StoreRejectedError } from "../domain/errors.ts";
import type { PublishesEvents } from "../domain/events.ts";
import { type Item, type ItemProblem, parseItem } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { confidence } from "../domain/probability.ts";
import type { Route } from "../domain/routing.ts";
import type { ShadowScore } from "../domain/shadow.ts";
import { type BatchDependencies, settleRecord } from "./batch-progress.ts";
import { type CertificateVerdicts, certificateVerdictsFor } from "./calibration/certificate-labels.ts";
import { scoreThroughTiers, type TierOutcome, tierAnswer } from "./cascade-scoring.ts";
import { batchOf, policyOf } from "./message-body.ts";
import { ensurePublished } from "./record-event.ts";
import { startShadow } from "./shadow-scoring.ts";

/** What {@link decideMessage} needs. */
export interface DecideDependencies {
  readonly policies: PolicyRegistry;
  readonly store: DecisionStore;
  readonly endpoint: DecidesItems;
  readonly publisher: PublishesEvents;
  /** How long a worker holds the right to publish; keep it below the queue's visibility timeout. */
  readonly publishLeaseMs: number;
  /** The clock: set once where the handlers are composed (a test sets its own). */
  readonly now: Clock;
  /**
   * Batch progress (the batch lane's items carry a batch id): each item's outcome is counted in
   * its batch once, after its event went out. Absent where no batch can arrive.
   */
  readonly batches?: BatchDependencies;
  /**
   * Where a policy that requires a certificate has it checked against its labels (once per
   * version). @default one per store, kept for the life of the process
   */
  readonly certificates?: CertificateVerdicts;
  /** Test seam: runs after the record is written and before its event (crash injection). */
  readonly afterRecordWrite?: (record: DecisionRecord) => void | Promise<void>;
}

/** What happened to the message. */
export type DecideOutcome = "decided" | "rejected" | "already_decided";

/** The outcome, and the route when this call decided the item. */
export interface DecideResult {
  readonly outcome: DecideOutcome;
  readonly route?: Route;
}

/** Decides one message body. */
export async function decideMessage(body: string, deps: DecideDependencies): Promise<DecideResult> {
  const now = deps.now().toISOString();
  const parsed = parseItem(body, (id) => deps.policies.current(id) !== undefined);
  if (!parsed.ok) {
    const itemId = parsed.id ?? `invalid-${createHash("sha256").update(body).digest("hex").slice(0, 24)}`;
    const record = await reject(itemId, policyOf(body), parsed.problems, now, deps);
    await settleBatch(batchOf(body), record, deps);
    return { outcome: "rejected" };
  }
  const item = parsed.item;
  const policy = deps.policies.current(item.policy)!;
  // One decision per item and policy: a duplicate delivered after a new policy version was
  // added is the same item, not a new one.
  const existing = await deps.store.latest(item.id, policy.id);
  if (existing && (!item.redecide || existing.policyVersion >= policy.version)) {
    if (!(await ensurePublished(existing, deps))) throw new EventOwedError(existing.itemId);
    // Counted again harmlessly: the batch counts a member once, and a crash after the record
    // but before the count is repaired here.
    await settleBatch(item.batchId, existing, deps);
    return { outcome: "already_decided" };
  }

  // The shadow candidate (when the item is in its sample) is scored at the same time; it never fails.
  const shadow = startShadow(item, policy, deps);
  // A policy that requires a certificate automates only on one its labels give back.
  const unverified = await certificateVerdictsFor(deps).requiredProblem(policy);
  let tiers: TierOutcome[];
  try {
    tiers = await scoreThroughTiers(item, policy, deps.endpoint, unverified);
  } catch (error) {
    if (error instanceof EndpointRejectedError) {
      const record = await reject(
        item.id,
        policy.id,
        [{ field: "state", message: error.message }],
        now,
        deps,
        policy.version,
      );
      await settleBatch(item.batchId, record, deps);
      return { outcome: "rejected" };
    }
    throw error;
  }
  const record = decidedRecord(item, policy, tiers, existing, shadow ? await shadow : undefined, now);
  let winner: DecisionRecord;
  let created: boolean;
  // Written holding the publish lease: the write that creates the record is also the claim.
  const leaseUntil = deps.now().getTime() + deps.publishLeaseMs;
  try {
    ({ record: winner, created } = await deps.store.create(record, leaseUntil));
  } catch (error) {
    if (!(error instanceof StoreRejectedError)) throw error;
    const refused = await reject(
      item.id,
      policy.id,
      [{ field: "item", message: `cannot be stored: ${error.message}` }],
      now,
      deps,
      policy.version,
    );
    await settleBatch(item.batchId, refused, deps);
    return { outcome: "rejected" };
  }
  await deps.afterRecordWrite?.(winner);
  // Not created: the lease is someone's, perhaps our own write's whose answer was lost.
  if (!(await ensurePublished(winner, deps, created))) throw new EventOwedError(winner.itemId);
  await settleBatch(item.batchId, winner, deps);
  return winner.route ? { outcome: "decided", route: winner.route } : { outcome: "decided" };
}

/**
 * The record of a decided item: the calibrated distribution and its route, the raw logits, the
 * hashes that scored it, its audit band and chance of being drawn, and the shadow score if any.
 * Under a cascade these are the acting tier's (the last one asked), and `tiers` keeps every
 * tier's answer in the order they were asked.
 */
function decidedRecord(
  item: Item,
  policy: Policy,
  tiers: readonly TierOutcome[],
  existing: DecisionRecord | undefined,
  shadow: ShadowScore | undefined,
  now: string,
): DecisionRecord {
  // The tier's calibration map (prior, temperature, offsets); the record keeps the raw logits.
  const { decision, probabilities, routing, policy: acting } = tiers.at(-1)!;
  return {
    itemId: item.id,
    policyId: policy.id,
    policyVersion: policy.version,
    status: routing.route === "auto" ? "auto_approved" : "pending_review",
    route: routing.route,
    reason: routing.reason,
    chosen: routing.chosen,
    distribution: Object.fromEntries(policy.options.map((option, i) => [option.id, probabilities[i]!])),
    rawLogits: decision.logits,
    topProbability: routing.topProbability,
    ...(policy.predictionSet
      ? {
          predictionSet: predictionSet(probabilities, policy.predictionSet).map((k) => policy.options[k]!.id),
        }
      : {}),
    confidence: confidence(probabilities),
    ...(routing.certificateProblem ? { certificateProblem: routing.certificateProblem } : {}),
    allowedTokenMass: decision.allowedTokenMass,
    temperature: acting.temperature,
    modelSha256: decision.modelSha256,
    promptSha256: decision.promptSha256,
    promptVersion: decision.promptVersion,
    ...(decision.optionOrder === "cyclic" ? { optionOrder: "cyclic" as const } : {}),
    latencyMs: Math.round(decision.latencyMs),
    ...(routing.audit
      ? { auditBand: routing.audit.band, auditInclusionProbability: routing.audit.inclusionProbability }
      : {}),
    ...(policy.cascade ? { tiers: tiers.map(tierAnswer) } : {}),
    ...(shadow ? { shadow } : {}),
    state: item.state,
    ...(item.metadata ? { metadata: item.metadata } : {}),
    ...(item.batchId ? { batchId: item.batchId } : {}),
    ...(existing?.route
      ? {
          supersedes: {
            policyVersion: existing.policyVersion,
            route: existing.route,
            ...(existing.chosen ? { chosen: existing.chosen } : {}),
          },
        }
      : {}),
    createdAt: now,
    updatedAt: now,
    eventPublished: false,
  };
}

async function reject(
  itemId: string,
  policyId: string,
  problems: ItemProblem[],
  now: string,
  deps: DecideDependencies,
  policyVersion = 0,
): Promise<DecisionRecord> {
  const { record, created } = await deps.store.create(
    {
      itemId,
      policyId,
      policyVersion,
      status: "rejected",
      problems,
      createdAt: now,
      updatedAt: now,
      eventPublished: false,
    },
    deps.now().getTime() + deps.publishLeaseMs,
  );
  await ensurePublished(record, deps, created);
  return record;
}

/** Counts the record's item in its batch, when it came in one and batches are tracked here. */
async function settleBatch(
  batchId: string | undefined,
  record: DecisionRecord,
  deps: DecideDependencies,
): Promise<void> {
  if (!batchId || !deps.batches) return;
  // The same item in another batch: one decision, noted on the record so its review counts there too.
  if (record.batchId !== batchId) await deps.store.addToBatch(record, batchId);
  await settleRecord(deps.batches, batchId, record);
}

/**
 * Asks a cascade's second model, after the fact, for the items a certificate rests on that lack
 * its answer (`decide calibrate --rescore`): labelled decisions of the current version and drawn
 * certification samples decided before the batch lane asked later models, or automated by the
 * first model (production never asked the second). Without that answer the cascade's certificate
 * cannot judge any pair whose first threshold would pass such an item on ("unjudgeable"). Each
 * item is sent through the endpoint exactly as the decide path sends it to that tier (the tier's
 * view of the policy, the stored state), read and routed under that tier's map, and the answer is
 * kept on the record under `rescores`, marked as a re-score with its tier and time, beside (never
 * in place of) the answers the decision was made with; it is never acted on. An answer carrying
 * the first model's file hash is not the second model's (the endpoint answered with the wrong
 * model) and is not kept. Straight after a certification sample is drawn (`decide calibrate --plan
 * --request N` with a scoring source), the same step runs on that sample's items alone.
 */
import { calibratedProbabilities } from "../../domain/calibration/map.ts";
import { type RescoredAnswer, rescoredReading, tierPolicy, tierReading } from "../../domain/cascade.ts";
import type { Clock } from "../../domain/clock.ts";
import type { DecidesItems } from "../../domain/decision-endpoint.ts";
import type { DecisionRecord } from "../../domain/decision-record.ts";
import type { DecisionStore } from "../../domain/decision-store.ts";
import type { Item } from "../../domain/item.ts";
import type { Policy } from "../../domain/policy/policy.ts";
import { routeDecision } from "../../domain/routing.ts";
import { tierAnswer } from "../cascade-scoring.ts";

/** What the re-score found and did. */
export interface Rescored {
  /** The model asked (the cascade's second). */
  readonly model: string;
  /**
   * Labelled decisions and drawn certification samples of the version (what a certificate reads);
   * with a sample named, that sample's items.
   */
  readonly considered: number;
  /** Of those, already holding the second model's answer (asked when decided, or re-scored before). */
  readonly answered: number;
  /** Re-scored now and recorded. */
  readonly rescored: number;
  /** Not re-scored, with why (no stored state, the endpoint refused it, the answer came from the wrong model). */
  readonly failed: readonly { readonly itemId: string; readonly reason: string }[];
}

/** What a certificate reads that lacks a cascade's second model's answer. */
export interface LaterTierGap {
  /** The model asked (the cascade's second). */
  readonly model: string;
  /** The labelled and drawn decisions of the version (of `sample` alone, when given). */
  readonly records: readonly DecisionRecord[];
  /** Of those, the ones whose deciding model left the second unasked, and no re-score since. */
  readonly lacking: readonly DecisionRecord[];
}

/**
 * The labelled or drawn decisions of `policy`'s current version (with `sample`, only the items of
 * that certification sample) and those lacking the second model's answer. A policy without a
 * cascade is a RangeError (there is no later model to ask).
 */
export async function laterTierGap(
  store: DecisionStore,
  policy: Policy,
  sample?: string,
): Promise<LaterTierGap> {
  const model = policy.cascade?.[0]?.model;
  if (!model) throw new RangeError(`${policy.id}@${policy.version} has no cascade: no later model to ask`);
  const all = await certificateRecords(store, policy);
  const records = sample === undefined ? all : all.filter((r) => r.certification?.sample === sample);
  const lacking = records.filter((r) => !tierReading(r, 1) && !rescoredReading(r, 1));
  return { model, records, lacking };
}

/**
 * Re-scores with `policy`'s second model every labelled or drawn decision of its current version
 * (with `sample`, every item of that certification sample) that lacks that model's answer,
 * `concurrency` at a time, and records each answer on its record. A policy without a cascade is a
 * RangeError (there is no later model to ask).
 */
export async function rescoreLaterTiers(
  deps: { readonly store: DecisionStore; readonly endpoint: DecidesItems; readonly now: Clock },
  policy: Policy,
  concurrency = 1,
  sample?: string,
): Promise<Rescored> {
  const { model, records, lacking } = await laterTierGap(deps.store, policy, sample);
  const failed: { itemId: string; reason: string }[] = [];
  if (deps.endpoint.serves && !deps.endpoint.serves(model)) {
    const reason = `this endpoint does not serve ${model}`;
    return {
      model,
      considered: records.length,
      answered: records.length - lacking.length,
      rescored: 0,
      failed: lacking.map((r) => ({ itemId: r.itemId, reason })),
    };
  }
  let rescored = 0;
  let next = 0;
  const worker = async () => {
    while (next < lacking.length) {
      const record = lacking[next++]!;
      const outcome = await rescoreOne(deps, policy, record);
      if (outcome === true) rescored++;
      else failed.push({ itemId: record.itemId, reason: outcome });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return { model, considered: records.length, answered: records.length - lacking.length, rescored, failed };
}

/** Asks the second model about one record and records its answer; true, or why not. */
async function rescoreOne(
  deps: { readonly store: DecisionStore; readonly endpoint: DecidesItems; readonly now: Clock },
  policy: Policy,
  record: DecisionRecord,
): Promise<true | string> {
  if (record.state === undefined) return "no stored state to send";
  const view = tierPolicy(policy, 1);
  const item = { id: record.itemId, state: record.state } as Item;
  let decision: Awaited<ReturnType<DecidesItems["decide"]>>;
  try {
    decision = await deps.endpoint.decide(item, view);
  } catch (error) {
    return `the endpoint did not answer: ${(error as Error).message}`;
  }
  if (decision.modelSha256 === tierReading(record, 0)?.modelSha256)
    return `the answer carries the first model's file hash, not ${view.model}'s: not kept`;
  const probabilities = calibratedProbabilities(decision.logits, view);
  const routing = routeDecision(view, probabilities, item.id, decision.allowedTokenMass);
  const answer: RescoredAnswer = {
    ...tierAnswer({ policy: view, decision, probabilities, routing }),
    rescore: true,
    tier: 1,
    rescoredAt: deps.now().toISOString(),
  };
  // Written only while the record is as read; a record that moved meanwhile (labelled, say) is read again once.
  for (let attempt = 0; attempt < 2; attempt++) {
    const current = attempt === 0 ? record : await deps.store.get(record);
    if (!current) return "the record is gone";
    if (rescoredReading(current, 1)) return true;
    const rescores = [...(current.rescores ?? []), answer];
    if (await deps.store.transition(current, current.status, current.status, { rescores })) return true;
  }
  return "the record changed while it was re-scored: run the command again";
}

/**
 * The decisions a certificate of the current version reads: those labelled since it was
 * calibrated, and the certification samples drawn from it still waiting for a label.
 */
async function certificateRecords(store: DecisionStore, policy: Policy): Promise<DecisionRecord[]> {
  const byId = new Map<string, DecisionRecord>();
  for await (const r of store.reviewedSince(policy.id, policy.calibratedAt ?? "0"))
    if (r.policyVersion === policy.version) byId.set(r.itemId, r);
  for await (const r of store.pendingSince(policy.id, "0"))
    if (r.policyVersion === policy.version && r.certification) byId.set(r.itemId, r);
  return [...byId.values()].sort((a, b) =>
    a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0,
  );
}

/**
 * The candidate's answers of a what-if (`what-if.ts`): from the records' stored logits or shadow
 * scores, or re-scored by an endpoint, a cascade's later models included where the one before
 * passes the item on.
 */

import { backoff } from "../../domain/backoff/backoff.ts";
import { passesOn, type TierAnswer, tierCount, tierPolicy } from "../../domain/cascade.ts";
import type { DecidesItems } from "../../domain/decision-endpoint.ts";
import type { DecisionRecord } from "../../domain/decision-record.ts";
import { EndpointOverloadedError, EndpointRejectedError } from "../../domain/errors.ts";
import type { Item } from "../../domain/item.ts";
import type { Policy } from "../../domain/policy/policy.ts";
import { type ShadowScore, shadowScore } from "../../domain/shadow.ts";
import { WHAT_IF } from "../../domain/topology.ts";
import type { Weighted } from "../../domain/what-if/sample.ts";
import { WhatIfError } from "./what-if-errors.ts";

/** Where the candidate's answers come from. */
export type WhatIfSource =
  | { readonly kind: "rescore"; readonly endpoint: DecidesItems; readonly concurrency: number }
  | { readonly kind: "stored-logits" }
  | { readonly kind: "shadow" };

/** The later models' counts while answering. */
export interface LaterCounts {
  answered: number;
  unanswered: number;
  calls: number;
}

/** What answering needs of the run: the candidate, why its certificate did not verify, the later models' counts. */
export interface AnswerContext {
  readonly candidate: Policy;
  readonly unverified: string | undefined;
  readonly later: LaterCounts;
}

/** The candidate's answer on each picked record, in order; undefined where the endpoint refused it. */
export async function answerAll(
  picked: readonly Weighted<DecisionRecord>[],
  context: AnswerContext,
  source: WhatIfSource,
  onAnswer: ((done: number, total: number) => void) | undefined,
  busy: (latencyMs: number) => void,
  refused: { itemId: string; reason: string }[],
): Promise<(ShadowScore | undefined)[]> {
  if (source.kind !== "rescore") return answerStored(picked, context, source.kind, onAnswer);
  return answerRescored(picked, context, source, onAnswer, busy, refused);
}

/** The candidate's answers from the records' stored logits (or their shadow scores). */
function answerStored(
  picked: readonly Weighted<DecisionRecord>[],
  { candidate, unverified, later }: AnswerContext,
  kind: "stored-logits" | "shadow",
  onAnswer: ((done: number, total: number) => void) | undefined,
): ShadowScore[] {
  const out: ShadowScore[] = new Array(picked.length);
  const stored = (r: DecisionRecord, answer: ShadowScore | DecisionRecord | TierAnswer, tier = 0) => {
    const logits = answer.rawLogits;
    if (logits?.length !== candidate.options.length)
      throw new WhatIfError(
        `${r.itemId}: its stored logits do not fit the candidate's ${candidate.options.length} options`,
      );
    // What scored the stored logits: the shadow's own where it says, else the live record's. A
    // later tier's answer speaks for itself only: the record's top fields are the acting tier's.
    const own = answer === r.shadow || tier > 0;
    const scoredBy = {
      allowedTokenMass: answer.allowedTokenMass ?? null,
      promptSha256: answer.promptSha256 ?? (tier > 0 ? "" : (r.promptSha256 ?? "")),
      modelSha256: answer.modelSha256 ?? (tier > 0 ? undefined : r.modelSha256),
      promptVersion: own ? answer.promptVersion : (answer.promptVersion ?? r.promptVersion),
    };
    const view = tierPolicy(candidate, tier);
    const whole = tier > 0 ? { index: tier, whole: candidate } : undefined;
    return shadowScore(view, { logits, ...scoredBy }, r.itemId, 0, unverified, whole);
  };
  // The later models from the record: its answer of each, where production asked that model.
  const storedTiers = (r: DecisionRecord, first: ShadowScore): ShadowScore => {
    let score = first;
    for (let tier = 1; tier < tierCount(candidate) && passesOn(score.reason!); tier++) {
      const answer = r.tiers?.[tier];
      if (answer?.model !== candidate.cascade![tier - 1]!.model) {
        later.unanswered++;
        return score;
      }
      later.answered++;
      score = stored(r, answer, tier);
    }
    return score;
  };
  for (const [i, { record }] of picked.entries()) {
    // The live answer is the first tier's: a cascade's record holds the acting tier's at its top.
    out[i] =
      kind === "shadow"
        ? stored(record, record.shadow ?? { policyVersion: 0 })
        : storedTiers(record, stored(record, record.tiers?.[0] ?? record));
    onAnswer?.(i + 1, picked.length);
  }
  return out;
}

/** The candidate's answers from the endpoint, `source.concurrency` at a time. */
async function answerRescored(
  picked: readonly Weighted<DecisionRecord>[],
  { candidate, unverified, later }: AnswerContext,
  source: Extract<WhatIfSource, { kind: "rescore" }>,
  onAnswer: ((done: number, total: number) => void) | undefined,
  busy: (latencyMs: number) => void,
  refused: { itemId: string; reason: string }[],
): Promise<(ShadowScore | undefined)[]> {
  const out: (ShadowScore | undefined)[] = new Array(picked.length);
  let next = 0;
  let done = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < picked.length) {
      const i = next++;
      const record = picked[i]!.record;
      try {
        const item = { id: record.itemId, policy: candidate.id, state: record.state as Item["state"] };
        const answer = await answerWhenFree(source.endpoint, item, candidate);
        busy(answer.latencyMs);
        let score = shadowScore(candidate, answer, record.itemId, answer.latencyMs, unverified);
        // A cascade's later models, asked as the decide path asks them.
        for (let tier = 1; tier < tierCount(candidate) && passesOn(score.reason!); tier++) {
          const view = tierPolicy(candidate, tier);
          const next = await answerWhenFree(source.endpoint, item, view);
          busy(next.latencyMs);
          later.calls++;
          later.answered++;
          const whole = { index: tier, whole: candidate };
          score = shadowScore(view, next, record.itemId, next.latencyMs, unverified, whole);
        }
        out[i] = score;
      } catch (error) {
        // A failure retries could not get past stops every worker: the run cannot be complete.
        if (!(error instanceof EndpointRejectedError)) {
          failed = true;
          throw stoppedBy(error, record.itemId, done, picked.length);
        }
        refused.push({ itemId: record.itemId, reason: error.message });
      }
      onAnswer?.(++done, picked.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(source.concurrency, picked.length) }, worker));
  return out;
}

/** The candidate's answer, asked again (with backoff) while the endpoint answers that it is busy. */
async function answerWhenFree(endpoint: DecidesItems, item: Item, candidate: Policy) {
  for (let attempt = 1; ; attempt++) {
    await backoff(attempt, WHAT_IF.busyBaseDelayMs);
    try {
      return await endpoint.decide(item, candidate);
    } catch (error) {
      if (!(error instanceof EndpointOverloadedError) || attempt >= WHAT_IF.busyTries) throw error;
    }
  }
}

/** What stopped a re-scoring run, in one line: the endpoint's state, the item, how far it got. */
function stoppedBy(error: unknown, itemId: string, done: number, total: number): WhatIfError {
  const what =
    error instanceof EndpointOverloadedError
      ? `the endpoint stayed busy (${error.reason}) through ${WHAT_IF.busyTries} tries`
      : `the endpoint failed (${String((error as Error).message ?? error).split("\n")[0]})`;
  return new WhatIfError(
    `${what} on item ${itemId}, after ${done} of ${total} answers: nothing was written; try again later or with a lower --concurrency`,
    { cause: error },
  );
}

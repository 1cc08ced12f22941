/**
 * What-if before a change: recent decisions of a policy are sampled (stratified by live route
 * and option), each is answered under the candidate version (or model) and routed as the
 * candidate would route it, and the two are compared (`shared/domain/what-if/compare.ts`). The
 * candidate's answers come from one of three places: a scoring source (re-scored: any model,
 * any prompt), the stored raw logits (when the candidate leaves the prompt as it is: calibration
 * and routing changes), or the shadow records the decide path wrote for this candidate. A
 * candidate with a cascade asks its later models where the one before passes the item on, as the
 * decide path does: re-scored, the endpoint answers them; from stored logits, the record's own
 * answer of that model where production asked it, and otherwise none (the item stays with people,
 * and the result counts it, so that a comparison of one model against two says what it could not
 * see).
 */

import { isDeepStrictEqual } from "node:util";
import type { DecisionRecord } from "../../domain/decision-record.ts";
import { type DecisionStore, everyDecision } from "../../domain/decision-store.ts";
import type { Policy } from "../../domain/policy/policy.ts";
import type { PolicyRegistry } from "../../domain/policy/registry.ts";
import { compareDecisions, type WhatIfRow, type WhatIfSummary } from "../../domain/what-if/compare.ts";
import { changedPromptField } from "../../domain/what-if/prompt-fields.ts";
import { StratifiedSampler, type Weighted } from "../../domain/what-if/sample.ts";
import { certificateVerdictsFor } from "../calibration/certificate-labels.ts";
import { answerAll, type LaterCounts, type WhatIfSource } from "./what-if-answers.ts";
import { WhatIfError, WhatIfNeedsScoringError } from "./what-if-errors.ts";

export type { WhatIfSource } from "./what-if-answers.ts";
export { WhatIfError, WhatIfNeedsScoringError } from "./what-if-errors.ts";

/** What a run needs. */
export interface WhatIfDependencies {
  readonly store: DecisionStore;
  readonly policies: PolicyRegistry;
}

/** Settings of a run. */
export interface WhatIfOptions {
  readonly candidate: Policy;
  readonly source: WhatIfSource;
  /** Decisions created at or after this time (ISO). */
  readonly since: string;
  /** Items to answer at most. */
  readonly sample: number;
  readonly confidence?: number;
  /** Called after each answered item (progress). */
  readonly onAnswer?: (done: number, total: number) => void;
}

/** The comparison, its rows, and what answering cost. */
export interface WhatIfResult {
  readonly live: Policy;
  readonly summary: WhatIfSummary;
  readonly rows: readonly WhatIfRow[];
  /** Items the endpoint refused (4xx), left out. */
  readonly refused: readonly { readonly itemId: string; readonly reason: string }[];
  /** Endpoint calls made, the wall time they took, and the sum of their latencies. */
  readonly cost: { readonly calls: number; readonly wallMs: number; readonly busyMs: number };
  /**
   * A cascade candidate's later models: items they answered, and items passed on to one whose
   * answer was not at hand (stored logits of an item production never asked it), left with people.
   */
  readonly laterModels: { readonly answered: number; readonly unanswered: number };
}

const DAY_MS = 86_400_000;

/** Runs the what-if; see the module comment. */
export async function whatIf(deps: WhatIfDependencies, options: WhatIfOptions): Promise<WhatIfResult> {
  const { candidate, source } = options;
  const live = deps.policies.current(candidate.id);
  if (!live) throw new WhatIfError(`the candidate's policy "${candidate.id}" is not a policy here`);
  // The live version answered from its own stored logits changes nothing: an all-clear that
  // checked nothing. (Re-scored, the same policy is a fair question: a new model file.)
  if (source.kind === "stored-logits" && isDeepStrictEqual(live, candidate))
    throw new WhatIfError(
      `the candidate is ${candidate.id} v${candidate.version} as it is live: nothing would change; give an edited copy`,
    );
  const { picked, days } = await sampleSince(deps.store, deps.policies, options);
  if (picked.length === 0)
    throw new WhatIfError(
      `no ${source.kind === "shadow" ? `shadow record of ${candidate.id} v${candidate.version}` : `decision of ${candidate.id}`} since ${options.since}`,
    );
  const refused: { itemId: string; reason: string }[] = [];
  // The decide path's certificate check, labels included where the candidate requires one.
  const unverified = await certificateVerdictsFor(deps).requiredProblem(candidate);
  const started = performance.now();
  let busyMs = 0;
  const later: LaterCounts = { answered: 0, unanswered: 0, calls: 0 };
  const answers = await answerAll(
    picked,
    { candidate, unverified, later },
    source,
    options.onAnswer,
    (latencyMs) => {
      busyMs += latencyMs;
    },
    refused,
  );
  const wallMs = performance.now() - started;
  const rows: WhatIfRow[] = [];
  for (const [i, { record, weight }] of picked.entries()) {
    const answer = answers[i];
    if (!answer) continue;
    rows.push({
      itemId: record.itemId,
      weight,
      live: {
        chosen: record.chosen!,
        route: record.route!,
        reason: record.reason!,
        topProbability: record.topProbability ?? Number.NaN,
      },
      candidate: {
        chosen: answer.chosen!,
        route: answer.route!,
        reason: answer.reason!,
        topProbability: answer.topProbability!,
      },
      ...(record.status === "reviewed" && record.label !== undefined ? { label: record.label } : {}),
    });
  }
  return {
    live,
    summary: compareDecisions(rows, days, options.confidence),
    rows,
    refused,
    cost: { calls: source.kind === "rescore" ? picked.length + later.calls : 0, wallMs, busyMs },
    laterModels: { answered: later.answered, unanswered: later.unanswered },
  };
}

/**
 * The records to answer, weighted, drawn while the policy's decisions since `since` stream past
 * a page at a time (routed ones only, so rejected items stay out): a stratified sample of them,
 * or of the candidate's shadow records. Memory holds the sample, never the window; `days` is
 * the span the decisions cover.
 */
async function sampleSince(
  store: DecisionStore,
  policies: PolicyRegistry,
  options: WhatIfOptions,
): Promise<{ picked: Weighted<DecisionRecord>[]; days: number }> {
  const { candidate, source } = options;
  const until = new Date(Date.now() + 1).toISOString();
  const sampler = new StratifiedSampler<DecisionRecord>(options.sample);
  const versions = new Set<number>();
  let shadowing = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  const filter = { since: options.since, until, policyId: candidate.id, policyIds: [candidate.id] };
  for await (const r of everyDecision(store, filter)) {
    if (r.route === undefined || r.chosen === undefined) continue;
    const at = Date.parse(r.createdAt);
    first = Math.min(first, at);
    last = Math.max(last, at);
    versions.add(r.policyVersion);
    if (source.kind !== "shadow") sampler.add(r);
    // Shadow records are a hash sample of the decisions of the versions that shadow this candidate.
    else if (policies.version(r.policyId, r.policyVersion)?.shadow?.version === candidate.version) {
      shadowing++;
      if (r.shadow?.policyVersion === candidate.version && r.shadow.rawLogits) sampler.add(r);
    }
  }
  const days = Math.max(1, (last - first) / DAY_MS);
  if (source.kind === "stored-logits")
    for (const version of versions) {
      const field = changedPromptField(policies.version(candidate.id, version), candidate);
      if (field)
        throw new WhatIfNeedsScoringError(
          `the candidate changes the prompt (${field}) of v${version}: its stored logits do not apply; give --model, --endpoint-name or --url to re-score`,
        );
    }
  if (source.kind !== "shadow") return { picked: sampler.sample(), days };
  const scale = sampler.count > 0 ? shadowing / sampler.count : 0;
  return { picked: sampler.sample().map((w) => ({ ...w, weight: w.weight * scale })), days };
}

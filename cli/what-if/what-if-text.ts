/**
 * What `decide what-if` prints: the comparison in lines, and its cost in seconds and money per
 * 1,000 decisions (the endpoint's busy time at a price per hour).
 */

import type { Policy } from "../../shared/domain/policy/policy.ts";
import { num, pct } from "../../shared/reports/report-style.ts";
import type { WhatIfResult } from "../../shared/use-cases/what-if/what-if.ts";

/** How the run was set up, for the wording. */
export interface WhatIfWording {
  readonly candidate: Policy;
  readonly since: string;
  /** Where the candidate's answers came from. */
  readonly where: string;
  readonly dollarsPerHour: number;
}

/** The cost lines: per 1,000 decisions, from the measured wall and busy time. */
export function costLines(result: WhatIfResult, dollarsPerHour: number): string[] {
  const { calls, wallMs, busyMs } = result.cost;
  if (calls === 0) return ["cost: no endpoint call (stored answers): 0 s and $0 per 1,000 decisions"];
  const perThousand = (ms: number) => (ms / calls) * 1000;
  const busySeconds = perThousand(busyMs) / 1000;
  return [
    `cost: ${calls} answers in ${num(wallMs / 1000, 1)} s: ${num(perThousand(wallMs) / 1000, 1)} s per 1,000 decisions (wall), endpoint busy ${num(busySeconds, 1)} s per 1,000`,
    `  = $${num((busySeconds * dollarsPerHour) / 3600, 4)} per 1,000 decisions at $${dollarsPerHour}/hour of endpoint time`,
  ];
}

/** What a cascade candidate's later models answered, and what they could not (stored logits of items production never asked them). */
function laterModelLines(result: WhatIfResult, candidate: Policy): string[] {
  const models = (candidate.cascade ?? []).map((t) => t.model);
  if (models.length === 0) return [];
  const { answered, unanswered } = result.laterModels;
  const lines = [
    `  later models (${models.join(", ")}): ${answered} answers on items the model before passed on`,
  ];
  if (unanswered > 0)
    lines.push(
      `  ${unanswered} passed on to a later model with no stored answer of it (production never asked it): left with people here; re-score (--url, --model or --endpoint-name) to ask it`,
    );
  return lines;
}

/** All lines, and the cost lines alone (for the report). */
export function whatIfLines(result: WhatIfResult, wording: WhatIfWording): { all: string[]; cost: string[] } {
  const s = result.summary;
  const est = (n: number) => num(n, 0);
  const cost = costLines(result, wording.dollarsPerHour);
  const l = s.labelled;
  const all = [
    `${wording.candidate.id}: what-if of candidate v${wording.candidate.version} against live v${result.live.version}: ${s.sampled} sampled of ${est(s.decisions)} decisions since ${wording.since.slice(0, 10)} (stratified by route and option); answers: ${wording.where}`,
    `  decisions that flip: ${s.flipped.items} of ${s.sampled} sampled (est. ${pct(s.flipped.estimated / s.decisions)} of decisions)`,
    ...s.flips.map((f) => `    ${f.from} -> ${f.to}: ${f.items} (est. ${est(f.estimated)})`),
    `  route changes (an audit sample counts as auto): ${s.toHuman.items} auto -> human (est. ${est(s.toHuman.estimated)}), ${s.toAuto.items} human -> auto (est. ${est(s.toAuto.estimated)})`,
    `  coverage (share automated, audit samples included): ${pct(s.coverage.live)} -> ${pct(s.coverage.candidate)}; of them audit samples (people label them first): ${pct(s.auditSamples.live)} -> ${pct(s.auditSamples.candidate)}`,
    `  escalations per day: ${num(s.escalationsPerDay.live, 1)} -> ${num(s.escalationsPerDay.candidate, 1)} (over ${num(s.days, 1)} days)`,
    `  wrong automatic actions on the labelled part: ${l.wrong} of ${l.automated} the candidate would automate (of ${l.items} labelled): at most ${pct(l.upperBound)} with ${pct(l.confidence)} confidence (exact binomial); labelled items are mostly escalations, not a random sample`,
    ...laterModelLines(result, wording.candidate),
    ...cost.map((line) => `  ${line}`),
    ...result.refused.map((r) => `  refused by the endpoint, left out: ${r.itemId}: ${r.reason}`),
  ];
  return { all, cost };
}

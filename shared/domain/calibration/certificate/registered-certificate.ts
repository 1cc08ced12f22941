/**
 * The registered certificate: a plan written with its certification sample (`registered-plan.ts`)
 * tested exactly as written, on exactly that sample. Only the sample's drawn decisions count
 * (never escalations, audits or any other label), each judged as the version decided it: the
 * acting model's calibrated top probability under the version's own maps (no refit), wrong when
 * the settled label is not its chosen option. A drawn decision not labelled (or not settled by its
 * reviewers), or drawn and not found, counts as wrong wherever a threshold would automate it.
 * Near-duplicates count once (`certificate-units.ts`). The plan's thresholds are tested in their
 * fixed order, strictest first, at the plan's level; every frame member had the same chance, so
 * the bound is the exact binomial one (groups of near-duplicates make it the weighted one). It
 * certifies the lowest passing threshold of the sequence, or none.
 */
import type { RegisteredResult } from "./certificate.ts";
import { type CertifiedItem, unitsAtGrid } from "./certificate-units.ts";
import { fixedSequence } from "./fixed-sequence.ts";
import type { RegisteredPlan } from "./registered-plan.ts";
import { boundOf } from "./weighted-bound.ts";

/**
 * Tests `plan` on its sample's drawn decisions (`drawn`, as the version decided them; unlabelled
 * ones marked): drawn decisions missing from `drawn` count as wrong at every threshold.
 */
export function certifyRegistered(
  plan: RegisteredPlan,
  sample: string,
  drawn: readonly CertifiedItem[],
): RegisteredResult {
  const absent = Math.max(0, plan.size - drawn.length);
  const items: CertifiedItem[] = [
    ...drawn.map((i) => ({ ...i, kind: "certification" as const, inclusionProbability: 1 })),
    ...Array.from({ length: absent }, (_, k) => ({
      confidence: 1,
      wrong: true,
      automatable: true,
      unlabelled: true,
      key: `absent#${k}`,
      kind: "certification" as const,
    })),
  ];
  const at = unitsAtGrid(items, plan.thresholds);
  const bound = (u: (typeof at)[number], e = u.evidence) => boundOf(e, plan.level);
  const chosen = fixedSequence(at, {
    eligible: (u) => u.automated > 0 && bound(u, u.noErrors) <= plan.maxError,
    passes: (u) => bound(u) <= plan.maxError,
  });
  const unlabelled = items.filter((i) => i.unlabelled).length;
  const base = {
    maxError: plan.maxError,
    confidence: plan.confidence,
    labels: items.length,
    ...(unlabelled > 0 ? { unlabelled } : {}),
    minAutomated: Math.floor(Math.log(1 - plan.level) / Math.log(1 - plan.maxError)) + 1,
    registered: { sample, n: plan.size, unlabelled, level: plan.level, round: plan.round },
  };
  const u = at[chosen];
  if (!u) return { ...base, threshold: null, automated: 0, errors: 0, coverage: 0, bound: null };
  return {
    ...base,
    threshold: u.threshold,
    automated: u.automated,
    errors: u.errors,
    coverage: u.coverage,
    bound: bound(u),
    evidence: u.evidence,
    kinds: u.kinds,
  };
}

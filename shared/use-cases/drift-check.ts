/**
 * The scheduled drift check: for every policy version with a calibration baseline, a sample of
 * the decisions of the last period (at most `DRIFT.sampleSize`, spread over the period, so the
 * reads never grow with the traffic) against that baseline; a "Calibration Drift" event for each
 * that drifted. `decisions` counts the decisions sampled.
 */

import { checkDrift } from "../domain/calibration/drift.ts";
import { publishedEvent } from "../domain/contracts/events.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import type { PublishesEvents } from "../domain/events.ts";
import { DetailType } from "../domain/events.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { DRIFT } from "../domain/topology.ts";

/** Checks every policy with a baseline; returns what it found. */
export async function runDriftCheck(
  deps: { policies: PolicyRegistry; store: DecisionStore; publisher: PublishesEvents },
  {
    periodHours = DRIFT.periodHours,
    minimumDecisions = DRIFT.minimumDecisions,
    now = new Date(),
  }: { periodHours?: number; minimumDecisions?: number; now?: Date } = {},
): Promise<{ policyId: string; decisions: number; drifted: boolean }[]> {
  const since = new Date(now.getTime() - periodHours * 3_600_000).toISOString();
  const results: { policyId: string; decisions: number; drifted: boolean }[] = [];
  for (const id of deps.policies.ids()) {
    const policy = deps.policies.current(id)!;
    if (!policy.baseline) continue;
    const sample = await deps.store.sampleDecisions({
      policyId: id,
      policyVersion: policy.version,
      since,
      until: now.toISOString(),
      size: DRIFT.sampleSize,
      slices: DRIFT.slices,
    });
    const mine = sample.filter((r) => r.distribution && r.route);
    if (mine.length < minimumDecisions) {
      results.push({ policyId: id, decisions: mine.length, drifted: false });
      continue;
    }
    const result = checkDrift(
      policy.baseline,
      mine.map((r) => ({
        probabilities: policy.options.map((o) => r.distribution![o.id] ?? 0),
        route: r.route!,
        allowedTokenMass: r.allowedTokenMass ?? null,
      })),
    );
    if (result.drifted) {
      await deps.publisher.publish([
        publishedEvent(DetailType.drift, `drift|${id}@${policy.version}|${now.toISOString()}`, {
          policyId: id,
          policyVersion: policy.version,
          periodHours,
          decisions: result.decisions,
          checks: result.checks,
        }),
      ]);
    }
    results.push({ policyId: id, decisions: result.decisions, drifted: result.drifted });
  }
  return results;
}

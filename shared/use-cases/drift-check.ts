/**
 * The scheduled drift check: for every policy version with a calibration baseline, the decisions
 * of the last period against that baseline; a "Calibration Drift" event for each that drifted.
 */

import { checkDrift } from "../domain/calibration/drift.ts";
import type { DecisionRecord, RecordStatus } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import type { PublishesEvents } from "../domain/events.ts";
import { DetailType, pipelineEvent } from "../domain/events.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";

/** Statuses a decided (not rejected) record can be in. */
const DECIDED: RecordStatus[] = ["auto_approved", "pending_review", "actioned", "reviewed"];

/** Checks every policy with a baseline; returns what it found. */
export async function runDriftCheck(
  deps: { policies: PolicyRegistry; store: DecisionStore; publisher: PublishesEvents },
  {
    periodHours = 24,
    minimumDecisions = 50,
    now = new Date(),
  }: { periodHours?: number; minimumDecisions?: number; now?: Date } = {},
): Promise<{ policyId: string; decisions: number; drifted: boolean }[]> {
  const since = new Date(now.getTime() - periodHours * 3_600_000).toISOString();
  const recent: DecisionRecord[] = (
    await Promise.all(DECIDED.map((status) => deps.store.listSince(status, since)))
  ).flat();
  const results: { policyId: string; decisions: number; drifted: boolean }[] = [];
  for (const id of deps.policies.ids()) {
    const policy = deps.policies.current(id)!;
    if (!policy.baseline) continue;
    const mine = recent.filter(
      (r) => r.policyId === id && r.policyVersion === policy.version && r.distribution && r.route,
    );
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
        pipelineEvent(DetailType.drift, `drift|${id}@${policy.version}|${now.toISOString()}`, {
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

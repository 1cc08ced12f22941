/**
 * The review service level, per policy: how many escalated items wait and how long the oldest
 * has waited, against the policy's limit (`reviewWithinMinutes`, else the default). The scheduled
 * review-backlog function publishes these as metrics, which the per-policy alarms watch. Every
 * policy gets a row, with zeros when nothing waits, so the alarms always have data. Each policy
 * costs bounded queries: the oldest entry of its pending shards, and a count that reads keys
 * only and stops at `REVIEW.backlogCountCap` (the metric saturates there).
 */
import type { DecisionStore } from "../../domain/decision-store.ts";
import type { PolicyRegistry } from "../../domain/policy/registry.ts";
import { REVIEW } from "../../domain/topology.ts";

/** One policy's backlog. */
export interface PolicyBacklog {
  readonly policyId: string;
  readonly pending: number;
  /** Whole minutes the oldest pending item has waited (0 when none waits). */
  readonly oldestMinutes: number;
  readonly limitMinutes: number;
  readonly overdue: boolean;
}

/** The backlog of every policy at `now`. */
export async function reviewBacklog(
  deps: { store: DecisionStore; policies: PolicyRegistry },
  now: Date,
  defaultLimitMinutes: number,
): Promise<PolicyBacklog[]> {
  return Promise.all(
    deps.policies.ids().map(async (policyId) => {
      const waiting = await deps.store.pendingOf(policyId, REVIEW.backlogCountCap);
      const oldest = waiting.oldestCreatedAt ? Date.parse(waiting.oldestCreatedAt) : now.getTime();
      const oldestMinutes = Math.max(0, Math.floor((now.getTime() - oldest) / 60_000));
      const limitMinutes = deps.policies.current(policyId)?.reviewWithinMinutes ?? defaultLimitMinutes;
      return {
        policyId,
        pending: waiting.count,
        oldestMinutes,
        limitMinutes,
        overdue: oldestMinutes > limitMinutes,
      };
    }),
  );
}

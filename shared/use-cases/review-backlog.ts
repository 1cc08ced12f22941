/**
 * The review service level, per policy: how many escalated items wait and how long the oldest
 * has waited, against the policy's limit (`reviewWithinMinutes`, else the default). The scheduled
 * review-backlog function publishes these as metrics, which the per-policy alarms watch. Every
 * policy gets a row, with zeros when nothing waits, so the alarms always have data.
 */
import type { DecisionStore } from "../domain/decision-store.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";

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
  const pending = await deps.store.listSince("pending_review", "1970-01-01T00:00:00.000Z");
  return deps.policies.ids().map((policyId) => {
    const waiting = pending.filter((r) => r.policyId === policyId);
    const oldest = waiting.reduce((min, r) => Math.min(min, Date.parse(r.createdAt)), now.getTime());
    const oldestMinutes = Math.floor((now.getTime() - oldest) / 60_000);
    const limitMinutes = deps.policies.current(policyId)?.reviewWithinMinutes ?? defaultLimitMinutes;
    return {
      policyId,
      pending: waiting.length,
      oldestMinutes,
      limitMinutes,
      overdue: oldestMinutes > limitMinutes,
    };
  });
}

/**
 * The live error rate of each policy's automatic actions, from its audit samples: the decisions
 * routed to people with the reason `audit_sample` since a date, each weighted by the inverse of
 * its stored inclusion probability (`shared/domain/audit/`). Labels given to items escalated for
 * any other reason are not a random sample of automatic decisions and stay out. Used by
 * `decide audit`, the daily Audit function, the decisions page and the calibration report.
 */
import { auditPolicy, type PolicyAudit } from "../domain/audit/policy-audit.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { AUDIT } from "../domain/topology.ts";

/** What the estimate reads. */
export interface AuditDependencies {
  readonly store: DecisionStore;
  readonly policies: PolicyRegistry;
}

/** The audit samples of every policy created at or after `since`, pending (unlabelled) or reviewed. */
export async function auditRecords(store: DecisionStore, since: string): Promise<DecisionRecord[]> {
  const [pending, reviewed] = await Promise.all([
    store.listSince("pending_review", since),
    store.listSince("reviewed", since),
  ]);
  return [...pending, ...reviewed].filter((r) => r.reason === "audit_sample");
}

/** The estimates of one policy (or every policy the registry knows) since `since`. */
export async function estimateAutoErrors(
  deps: AuditDependencies,
  options: { readonly since: string; readonly policyId?: string; readonly confidence?: number },
): Promise<PolicyAudit[]> {
  const records = await auditRecords(deps.store, options.since);
  const ids = options.policyId ? [options.policyId] : deps.policies.ids();
  return ids.map((id) => auditPolicy(id, records, deps.policies, options.since, options.confidence));
}

/** The start of the default window: `days` before `now`. */
export function windowStart(now: Date, days: number = AUDIT.windowDays): string {
  return new Date(now.getTime() - days * 86_400_000).toISOString();
}

/** One policy's estimate over the default window ending at `now` (the calibration report's section). */
export async function recentAudit(
  deps: AuditDependencies,
  policyId: string,
  now: Date,
): Promise<PolicyAudit> {
  const since = windowStart(now);
  return auditPolicy(policyId, await auditRecords(deps.store, since), deps.policies, since);
}

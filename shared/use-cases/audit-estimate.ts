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

/**
 * A policy's audit samples decided at or after `since`, pending (unlabelled) or reviewed. Bounded
 * reads: the items of the policy waiting for review decided since then, and its labels given
 * since then (a sample decided since `since` was labelled since then too); what the reads grow
 * with is the reviewers' work, never the automatic traffic.
 */
export async function auditRecords(
  store: DecisionStore,
  policyId: string,
  since: string,
): Promise<DecisionRecord[]> {
  const samples: DecisionRecord[] = [];
  for await (const r of store.pendingSince(policyId, since)) if (r.reason === "audit_sample") samples.push(r);
  for await (const r of store.reviewedSince(policyId, since))
    if (r.reason === "audit_sample" && r.createdAt >= since) samples.push(r);
  return samples;
}

/**
 * The estimates of one policy (or every policy the registry knows) since `since`, as of `now`
 * (when an unlabelled sample becomes overdue).
 */
export async function estimateAutoErrors(
  deps: AuditDependencies,
  options: {
    readonly since: string;
    readonly now: Date;
    readonly policyId?: string;
    readonly confidence?: number;
  },
): Promise<PolicyAudit[]> {
  const ids = options.policyId ? [options.policyId] : deps.policies.ids();
  const window = { since: options.since, now: options.now.toISOString() };
  const audits: PolicyAudit[] = [];
  for (const id of ids)
    audits.push(
      auditPolicy(
        id,
        await auditRecords(deps.store, id, options.since),
        deps.policies,
        window,
        options.confidence,
      ),
    );
  return audits;
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
  const records = await auditRecords(deps.store, policyId, since);
  return auditPolicy(policyId, records, deps.policies, { since, now: now.toISOString() });
}

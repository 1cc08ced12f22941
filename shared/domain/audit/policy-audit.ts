/**
 * A policy's live error rate from its audit records: each record drawn for audit (reason
 * `audit_sample`) becomes a sample in its stratum (policy version and audit band) with its stored
 * inclusion probability, labelled when a reviewer gave the final label; the estimate is taken
 * over all of the policy's samples and per option chosen, with the caveats a reader needs (thin
 * or unaudited bands). Pure: the records are read by `shared/use-cases/audit-estimate.ts`.
 */
import type { DecisionRecord } from "../decision-record.ts";
import { counted } from "../plural.ts";
import type { Policy } from "../policy/policy.ts";
import type { PolicyRegistry } from "../policy/registry.ts";
import { AUDIT } from "../topology.ts";
import { bandName, bandStart } from "./bands.ts";
import { type AutoErrorEstimate, estimateAutoError } from "./estimate.ts";
import { type BudgetVerdict, budgetVerdict, type VerdictSample } from "./verdict.ts";

/** One stratum's counts, for the table of bands. */
export interface StratumCounts {
  readonly policyVersion: number;
  readonly band: string;
  readonly inclusionProbability: number;
  readonly samples: number;
  readonly labelled: number;
  readonly wrong: number;
}

/** A policy's audit estimate. */
export interface PolicyAudit {
  readonly policyId: string;
  /**
   * The budget the verdict reads: the current version's `maxAutoError`, else the target its
   * certificate claims (a certified version is watched against its own claim).
   */
  readonly target?: number;
  /** Where `target` comes from; against a certificate only the current version's samples are judged. */
  readonly targetSource?: "maxAutoError" | "certificate";
  readonly since: string;
  readonly overall: AutoErrorEstimate;
  /** By the option the model chose (the action taken). */
  readonly byOption: readonly { readonly option: string; readonly estimate: AutoErrorEstimate }[];
  readonly strata: readonly StratumCounts[];
  /** Against the budget, when the policy sets one: within, over, or not enough labels (`verdict.ts`). */
  readonly verdict?: BudgetVerdict;
  /** Plain-language caveats: thin or unaudited bands, disputed samples, samples without a probability. */
  readonly notes: readonly string[];
}

/**
 * A record as an audit sample, overdue when still unlabelled `AUDIT.overdueAfterHours` after it
 * was drawn (at `now`); undefined when its inclusion probability is unknown.
 */
function sampleOf(record: DecisionRecord, policies: PolicyRegistry, now: number): VerdictSample | undefined {
  // Records from before audit bands carry no probability: their version's flat rate drew them.
  const pi =
    record.auditInclusionProbability ??
    policies.version(record.policyId, record.policyVersion)?.auditSampleRate;
  if (!(pi !== undefined && pi > 0 && pi <= 1) || record.chosen === undefined) return undefined;
  const labelled = record.status === "reviewed" && record.label !== undefined;
  const overdue = !labelled && Date.parse(record.createdAt) < now - AUDIT.overdueAfterHours * 3_600_000;
  return {
    stratum: `${record.policyVersion}|${record.auditBand ?? "all"}`,
    inclusionProbability: pi,
    chosen: record.chosen,
    ...(labelled ? { label: record.label } : {}),
    ...(!labelled && record.firstReview ? { awaitingSecondReviewer: true } : {}),
    ...(overdue ? { overdue } : {}),
  };
}

/** The window an estimate reads: decisions made from `since` until `now` (ISO times). */
export interface AuditWindow {
  readonly since: string;
  readonly now: string;
}

/** The audit estimate of one policy from its audit records (already read). */
export function auditPolicy(
  policyId: string,
  records: readonly DecisionRecord[],
  policies: PolicyRegistry,
  window: AuditWindow,
  confidence: number = AUDIT.confidence,
): PolicyAudit {
  const since = window.since;
  const own = records.filter((r) => r.policyId === policyId);
  const samples = own.map((r) => sampleOf(r, policies, Date.parse(window.now)));
  const usable = samples.filter((s): s is VerdictSample => s !== undefined);
  const notes: string[] = [];
  if (usable.length < own.length)
    notes.push(
      `${counted(own.length - usable.length, "audit sample carries", "audit samples carry")} no inclusion probability and ${own.length - usable.length === 1 ? "is" : "are"} left out`,
    );
  // A disputed sample waits for an admin: counted as unlabelled, though it is likelier wrong.
  const disputed = own.filter((r) => r.disputed && r.status === "pending_review").length;
  if (disputed > 0)
    notes.push(
      `${counted(disputed, "audit sample is", "audit samples are")} disputed between reviewers and ${disputed === 1 ? "waits" : "wait"} for an admin's label: counted as unlabelled until then`,
    );
  const strata = strataOf(usable);
  for (const s of strata)
    if (s.labelled < AUDIT.minLabelsPerBand)
      notes.push(
        `v${s.policyVersion} band ${s.band}: ${s.labelled} labelled of ${s.samples} drawn (under ${AUDIT.minLabelsPerBand}): its error rate is poorly known and widens the interval; label its samples or raise its audit rate`,
      );
  const current = policies.current(policyId);
  if (current?.auditBands)
    for (let i = 0; i <= current.auditBands.edges.length; i++) {
      const band = bandName(current.auditBands.edges, i);
      if (!strata.some((s) => s.policyVersion === current.version && s.band === band))
        notes.push(
          `v${current.version} band ${band}: no audit sample since ${since.slice(0, 10)}: the estimate does not cover it`,
        );
    }
  const options = [...new Set(usable.map((s) => s.chosen))].sort();
  const budget = budgetOf(current);
  return {
    policyId,
    ...(budget
      ? { ...budget, verdict: budgetVerdict(judged(usable, budget, current!), budget.target, confidence) }
      : {}),
    since,
    overall: estimateAutoError(usable, confidence),
    byOption: options.map((option) => ({
      option,
      estimate: estimateAutoError(
        usable.filter((s) => s.chosen === option),
        confidence,
      ),
    })),
    strata,
    notes,
  };
}

function strataOf(samples: readonly VerdictSample[]): StratumCounts[] {
  const byKey = new Map<string, StratumCounts>();
  for (const s of samples) {
    const [version, band] = s.stratum.split("|") as [string, string];
    const before = byKey.get(s.stratum) ?? {
      policyVersion: Number(version),
      band,
      inclusionProbability: s.inclusionProbability,
      samples: 0,
      labelled: 0,
      wrong: 0,
    };
    byKey.set(s.stratum, {
      ...before,
      samples: before.samples + 1,
      labelled: before.labelled + (s.label !== undefined ? 1 : 0),
      wrong: before.wrong + (s.label !== undefined && s.label !== s.chosen ? 1 : 0),
    });
  }
  return [...byKey.values()].sort(
    (a, b) => a.policyVersion - b.policyVersion || bandStart(a.band) - bandStart(b.band),
  );
}

/**
 * The samples a verdict reads: all of the window's against `maxAutoError` (the policy's budget,
 * whatever version acted), the current version's alone against its certificate (the claim is
 * about that version's automatic actions, not an earlier one's).
 */
function judged(
  usable: readonly VerdictSample[],
  budget: { readonly targetSource: "maxAutoError" | "certificate" },
  current: Policy,
): VerdictSample[] {
  if (budget.targetSource === "maxAutoError") return [...usable];
  return usable.filter((s) => s.stratum.startsWith(`${current.version}|`));
}

/**
 * The budget a policy's audits are judged against: its `maxAutoError`, else the target of the
 * certificate it acts under (none when its certificate certified no threshold). The daily Audit
 * function's alarms are synthesized from the same (`infra/constructs/audit-jobs.ts`).
 */
export function budgetOf(
  policy: Policy | undefined,
): { target: number; targetSource: "maxAutoError" | "certificate" } | undefined {
  if (policy?.maxAutoError !== undefined)
    return { target: policy.maxAutoError, targetSource: "maxAutoError" };
  const certificate = policy?.certificate;
  if (certificate && certificate.threshold !== null)
    return { target: certificate.maxError, targetSource: "certificate" };
  return undefined;
}

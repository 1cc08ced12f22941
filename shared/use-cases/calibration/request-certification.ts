/**
 * Asks reviewers for exactly the labels a certificate needs (`decide calibrate --plan --request
 * N`): a certification sample of the current version's decisions, drawn evenly across confidence
 * bands from those whose top option may be automated and whose confidence is at least the plan's
 * threshold (`shared/domain/calibration/certificate/certification-draw.ts`), put into the review queue. Each
 * drawn record keeps the frame, its band and its chance, so a certificate can weight its label. It
 * draws only decisions never chosen for a label (not escalated, audited, or drawn by an earlier
 * sample: those count already), and says how many it left out. So no drawn item was ever reviewed
 * before it was drawn: each is an automated decision put into the queue, and under
 * `certificationReviewers: 2` it backs a claim only with the label two reviewers agreed on (or an
 * admin settled); reviewed once, it counts as drawn and not labelled. An automated decision joins the
 * queue without its action being undone (actioned → waiting for a label); one whose action is
 * still being applied is left out and counted. The queue serves them by when they joined it: now, or, with `first`,
 * just before the oldest item waiting, so that they come first while the backlog reads (almost)
 * no older. The sample carries its registered plan (`registered-plan.ts`), written on every drawn
 * record before anyone labels: the goal, the thresholds its certificate will test, strictest first,
 * down to the frame's minimum, the size, the version, and the level (the version's first plan at
 * 80% of α = 1 − confidence, each later one at half of what is left).
 */
import { createHash } from "node:crypto";
import type { CertificateGoal } from "../../domain/calibration/certificate/certificate.ts";
import { drawCertificationSample } from "../../domain/calibration/certificate/certification-draw.ts";
import type { CertificationFrame } from "../../domain/calibration/certificate/certification-sample.ts";
import { chosenAutomatable } from "../../domain/calibration/certificate/label-selection.ts";
import { type RegisteredPlan, registerPlan } from "../../domain/calibration/certificate/registered-plan.ts";
import { decisionRulesSha256, policyTextSha256 } from "../../domain/calibration/provenance.ts";
import { tiersOf } from "../../domain/cascade.ts";
import type { Clock } from "../../domain/clock.ts";
import type { DecisionRecord } from "../../domain/decision-record.ts";
import { type DecisionStore, everyDecision } from "../../domain/decision-store.ts";
import type { Policy } from "../../domain/policy/policy.ts";

/** Where the sample goes in the review queue. */
export const QUEUE_ORDERS = ["first", "by-time"] as const;
/** One of {@link QUEUE_ORDERS}. */
export type QueueOrder = (typeof QUEUE_ORDERS)[number];

/** What was asked. */
export interface CertificationRequest {
  readonly policy: Policy;
  /** Decisions to draw. */
  readonly size: number;
  /** The frame's lowest calibrated top probability (no lower than the version's threshold). */
  readonly minProbability: number;
  readonly order: QueueOrder;
  /**
   * The goal its registered plan will test (`registered-plan.ts`).
   * @default the policy's maxAutoError (else 2%) with 95% confidence
   */
  readonly goal?: CertificateGoal;
  /**
   * The policy's other versions: the plans of those identical in what is certified share this
   * one's error budget ({@link sameClaimVersions}). @default none
   */
  readonly otherVersions?: readonly Policy[];
  /**
   * The plan's round as the caller read it ({@link nextPlanRound}) to choose its threshold at
   * that round's share of α: the draw is refused ({@link PlanRoundMovedError}) when another plan
   * of the same claim was drawn since, which would leave two plans on one share.
   * @default whatever round the draw finds
   */
  readonly round?: number;
}

/** Another plan of the same claim was drawn between the caller's plan and its draw. */
export class PlanRoundMovedError extends Error {
  constructor(
    readonly planned: number,
    readonly found: number,
  ) {
    super(
      `another plan of this claim was drawn meanwhile: this one was planned as plan ${planned} and would be plan ${found}; ` +
        "plan again (its threshold is tested at that plan's share of α), nothing was drawn",
    );
    this.name = "PlanRoundMovedError";
  }
}

/** What happened. */
export interface CertificationRequested {
  readonly frame: CertificationFrame;
  /** Decisions in the frame not chosen for a label before: what the draw chose from. */
  readonly population: number;
  /** Drawn and put into the queue (automated ones: nothing waiting or labelled is ever drawn). */
  readonly queued: number;
  /** Drawn while their action was still being applied (or no longer automated when written): left out. */
  readonly skipped: number;
  /**
   * Decisions at or above the frame's minimum already chosen for a label before (escalated, audit
   * or earlier certification samples, waiting or labelled): not drawn again, as they count already.
   */
  readonly chosenBefore: number;
  /**
   * The plan written on every drawn record: what its certificate will test, and at what level
   * (always set by {@link requestCertification}; optional for results built by hand).
   */
  readonly plan?: RegisteredPlan;
}

/** Draws the sample and puts it into the review queue. */
export async function requestCertification(
  deps: { readonly store: DecisionStore; readonly now: Clock },
  request: CertificationRequest,
): Promise<CertificationRequested> {
  const { policy } = request;
  const now = deps.now().toISOString();
  const minProbability = Math.max(request.minProbability, policy.autoThreshold);
  const { members, chosenBefore, round } = await readFrame(deps.store, request, now, minProbability);
  if (request.round !== undefined && request.round !== round)
    throw new PlanRoundMovedError(request.round, round);
  const sample = `cert-${now.replace(/[^0-9]/g, "").slice(0, 14)}-${createHash("sha256").update(`${policy.id}@${policy.version}|${now}`).digest("hex").slice(0, 8)}`;
  const { frame: drawnFrame, drawn } = drawCertificationSample(
    members.map((r) => ({
      record: r,
      itemId: r.itemId,
      createdAt: r.createdAt,
      topProbability: r.topProbability!,
      automatable: chosenAutomatable(r, policy),
    })),
    request.size,
    // Below the version's threshold every decision is escalated already, labelled at chance 1:
    // drawing there would spend the sample on labels the queue gives anyway.
    { sample, drawnAt: now, minProbability },
  );
  const goal = request.goal ?? { maxError: policy.maxAutoError ?? 0.02, confidence: 0.95 };
  // The plan's size: the drawn decisions that can be queued now (automated, their action applied);
  // one that a review takes between this read and its write counts, absent, as wrong.
  const queueable = drawn.filter((d) => markable(d.member.record)).length;
  const plan = registerPlan(
    goal,
    minProbability,
    queueable,
    policy.version,
    round,
    decisionRulesSha256(policy, tiersOf(policy)),
  );
  const frame = { ...drawnFrame, plan };
  // First: a millisecond before the oldest item waiting, so the backlog's age barely moves.
  const oldest =
    request.order === "first" ? (await deps.store.pendingOf(policy.id, 1)).oldestCreatedAt : undefined;
  const queuedAt = oldest ? new Date(Date.parse(oldest) - 1).toISOString() : now;
  let [queued, skipped] = [0, 0];
  for (const { member, draw } of drawn) {
    const r = member.record;
    const certification = { ...draw, plan };
    // Only from actioned: an item reviewed (even once) since the read is never marked as a draw.
    // One held for people alone is marked where it stands (waiting, or settled): it is in the sample.
    const marked = heldForPeopleAlone(r)
      ? markable(r) && (await deps.store.transition(r, r.status, r.status, { certification }))
      : r.status === "actioned" &&
        (await deps.store.transition(r, "actioned", "pending_review", { certification, queuedAt }));
    if (marked) queued++;
    else skipped++;
  }
  return {
    frame,
    population: frame.rates.length ? countIn(members, frame, policy) : 0,
    queued,
    skipped,
    chosenBefore,
    plan,
  };
}

/**
 * One read of the table up to `until`: the version's decisions never chosen for a label (what a
 * draw chooses from), how many at or above `minProbability` were chosen before, and this plan's
 * round, after the earlier registered plans of the same claim (tested at its share of what is
 * left of α).
 */
async function readFrame(
  store: DecisionStore,
  request: CertificationRequest,
  until: string,
  minProbability: number,
): Promise<{ members: DecisionRecord[]; chosenBefore: number; round: number }> {
  const { policy } = request;
  const window = { since: "1970-01-01T00:00:00.000Z", until, policyId: policy.id, policyIds: [policy.id] };
  const sameClaim = sameClaimVersions(policy, request.otherVersions);
  const earlierPlans = new Set<string>();
  const members: DecisionRecord[] = [];
  let chosenBefore = 0;
  for await (const r of everyDecision(store, window)) {
    const earlier = planSampleOf(r, sameClaim);
    if (earlier) earlierPlans.add(earlier);
    if (r.policyVersion === policy.version && r.route !== undefined && r.topProbability !== undefined) {
      // Only decisions never chosen for a label: a new sample never spends itself on labels held.
      if (!chosenForLabel(r)) members.push(r);
      else if (chosenAutomatable(r, policy) && r.topProbability >= minProbability) chosenBefore++;
    }
  }
  return { members, chosenBefore, round: earlierPlans.size + 1 };
}

/**
 * Whether `r` was chosen for a label already (waiting, labelled, or drawn by an earlier sample).
 * Leaving it out of the new draw keeps each decision's chance of a label right: its chance by the
 * earlier choice, else the new draw's rate among the decisions not chosen (`label-selection.ts`
 * combines them as 1 − (1 − one)(1 − other), the same figure).
 */
function chosenForLabel(r: DecisionRecord): boolean {
  if (heldForPeopleAlone(r) && r.certification === undefined) return false;
  return r.certification !== undefined || r.status === "pending_review" || r.status === "reviewed";
}

/**
 * Whether `r` waits for (or has) a label only because it was held for people, not drawn by chance:
 * a gold item (the lead chose it: leaving it out would let whoever loads gold items purge the
 * decisions they know are wrong from every later sample), or a decision the version would have
 * automated but for a missing certificate (`uncertified`: under requireCertificate every such
 * decision waits, and leaving them out would leave nothing to draw). Both stay in the frame.
 */
function heldForPeopleAlone(r: DecisionRecord): boolean {
  return r.gold !== undefined || r.reason === "uncertified";
}

/** Whether a drawn decision can carry the draw now: automated with its action applied, or held for people alone. */
function markable(r: DecisionRecord): boolean {
  if (r.status === "actioned") return true;
  return heldForPeopleAlone(r) && (r.status === "pending_review" || r.status === "reviewed");
}

/** Decisions of `members` inside `frame`. */
function countIn(members: readonly DecisionRecord[], frame: CertificationFrame, policy: Policy): number {
  return members.filter(
    (r) =>
      chosenAutomatable(r, policy) &&
      r.createdAt <= frame.drawnAt &&
      r.topProbability! >= frame.minProbability,
  ).length;
}

/**
 * The versions whose registered plans share `policy`'s error budget: its own, and every other
 * version that gives the same calibrated probabilities (the same question, options and layout,
 * and for every model the same model and map, read as it acts: a temperature of 1, all-zero
 * offsets and an even prior are no map at all). Thresholds and floors are left out on purpose:
 * they only choose which of those decisions act, so a version that moves only its threshold is
 * another look at the same claim (the earlier plan tested that threshold already). Without it,
 * bumping a version that changes nothing certified would start a fresh budget at plan 1.
 */
export function sameClaimVersions(policy: Policy, others: readonly Policy[] = []): Set<number> {
  const claim = claimOf(policy);
  const same = others.filter((o) => o.id === policy.id && claimOf(o) === claim);
  return new Set([policy.version, ...same.map((o) => o.version)]);
}

/** What makes two versions one claim: the text and each model's map as it acts (`sameClaimVersions`). */
function claimOf(policy: Policy): string {
  const even = (values: readonly number[] | undefined) => !values || values.every((v) => v === values[0]);
  return JSON.stringify({
    text: policyTextSha256(policy),
    models: tiersOf(policy).map((t) => ({
      model: t.model ?? null,
      temperature: (t.temperature ?? 1) === 1 ? null : t.temperature,
      optionBias: !t.optionBias || t.optionBias.every((b) => b === 0) ? null : t.optionBias,
      prior: even(t.prior) ? null : t.prior,
    })),
  });
}

/** The round the next registered plan of `policy` takes: 1 + the plans of its claim drawn so far. */
export async function nextPlanRound(
  store: DecisionStore,
  policy: Policy,
  otherVersions: readonly Policy[] = [],
  until: string = new Date().toISOString(),
): Promise<number> {
  const sameClaim = sameClaimVersions(policy, otherVersions);
  const samples = new Set<string>();
  const window = { since: "1970-01-01T00:00:00.000Z", until, policyId: policy.id, policyIds: [policy.id] };
  for await (const r of everyDecision(store, window)) {
    const sample = planSampleOf(r, sameClaim);
    if (sample) samples.add(sample);
  }
  return samples.size + 1;
}

/** The registered plan's sample `r` was drawn by, when it was one of a version in `sameClaim`. */
function planSampleOf(r: DecisionRecord, sameClaim: ReadonlySet<number>): string | undefined {
  return r.certification?.plan && sameClaim.has(r.policyVersion) ? r.certification.sample : undefined;
}

/**
 * `decide calibrate --plan`: how many labels a certificate needs before anyone labels, how many
 * of those held count, and how long the audit rate takes to supply the rest
 * (`shared/domain/calibration/certificate/label-plan.ts`); with `--request N`, a certification sample of N
 * decisions put into the review queue (`shared/use-cases/calibration/request-certification.ts`), and for a
 * cascade the drawn items the first model decided re-scored with the later model when a source is
 * named (`calibrate-rescore.ts`), else one line saying how many lack its answer and how to get it.
 */
import { kindsText } from "../../shared/domain/calibration/certificate/certificate.ts";
import { type LabelPlan, planLabels } from "../../shared/domain/calibration/certificate/label-plan.ts";
import { chosenAutomatable } from "../../shared/domain/calibration/certificate/label-selection.ts";
import { reviewerPlanLines } from "../../shared/domain/calibration/certificate/reviewer-plan.ts";
import { systemClock } from "../../shared/domain/clock.ts";
import { everyDecision } from "../../shared/domain/decision-store.ts";
import { counted } from "../../shared/domain/plural.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import {
  type CertificationRequested,
  nextPlanRound,
  PlanRoundMovedError,
  type QueueOrder,
  requestCertification,
} from "../../shared/use-cases/calibration/request-certification.ts";
import { reviewedLabels } from "../../shared/use-cases/review/reviewed-labels.ts";
import { CommandError, UsageError } from "../args.ts";
import { awsOptions, decisionStore } from "../aws.ts";
import type { CommandIo, Printed } from "../command.ts";
import { readRows } from "./calibrate-input.ts";
import {
  type Registration,
  registeredRequestLines,
  registeredView,
  registrationLines,
  testedGoal,
} from "./calibrate-registered.ts";
import { type DrawnRescore, drawnRescoreLines, openDrawnRescore, rescoreDrawn } from "./calibrate-rescore.ts";
import type { ScoringFlags } from "./calibrate-scoring.ts";

/** What `--plan` was asked. */
export interface PlanOptions {
  readonly policyId: string;
  readonly policiesDir: string;
  readonly goal: { readonly maxError: number; readonly confidence: number };
  /** The decisions table (labels, volume, and where a sample goes), or a labelled file. */
  readonly table: string | undefined;
  readonly input: string | undefined;
  readonly request: number | undefined;
  readonly order: QueueOrder;
  readonly aws: { readonly region?: string | undefined; readonly profile?: string | undefined };
  /** With `request`, for a cascade: where to ask the later model about the drawn items (`--url` and the like). */
  readonly scoring?: ScoringFlags;
}

/** What the plan found, and the sample when one was asked for. */
export interface Planned {
  readonly policy: Policy;
  readonly plan: LabelPlan;
  readonly where: string;
  /**
   * From the table: automatic decisions in the last 24 hours at or above the plan's threshold, the
   * audit labels they give, and how far back the policy's oldest decision of that window goes
   * (`spanMs`; less than a day when the table is younger, and the count is then not a day's).
   */
  readonly supply?: {
    readonly perDay: number;
    readonly auditPerDay: number;
    readonly capped: boolean;
    readonly spanMs?: number;
  };
  readonly requested?: CertificationRequested;
  /** The registered plan a request writes (or wrote): which of the version's plans, and its level. */
  readonly registration?: Registration;
  /** For a cascade, after the draw: the drawn items lacking the later model's answer, and their re-score. */
  readonly drawn?: DrawnRescore;
  readonly options: PlanOptions;
}

/**
 * How long the audit rate takes to supply `remaining` labels. A table younger than a day (its
 * oldest decision in the window less than 23 hours old) has not seen a day's traffic, so its
 * count is said for the span it covers, and the days are an upper estimate at that count.
 */
export function supplyText(supply: NonNullable<Planned["supply"]>, remaining: number): string {
  const count = `${supply.capped ? "at least " : ""}${supply.perDay} automatic decisions`;
  const n = Math.ceil(remaining / supply.auditPerDay);
  const days = `${n} day${n === 1 ? "" : "s"}`;
  const young = supply.spanMs !== undefined && !supply.capped && supply.spanMs < DAY_MS - 3_600_000;
  if (!young)
    return `; the audit rate supplies about ${supply.auditPerDay.toFixed(1)} a day from ${count} a day: about ${days}`;
  const minutes = Math.max(1, Math.round(supply.spanMs! / 60_000));
  const span = minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
  return `; the audit rate supplied about ${supply.auditPerDay.toFixed(1)} from ${count} in the last 24 hours, but the policy's decisions there span only ${span}: about ${days} if a day brings no more than these, fewer if the traffic keeps its pace`;
}

/** Most decisions of the last day read to measure the volume. */
const VOLUME_READ_CAP = 50_000;
const DAY_MS = 86_400_000;

/** Runs the plan (and the request); `note` takes the re-score's line of progress. */
export async function planFromLabels(
  options: PlanOptions,
  io: Pick<CommandIo, "note"> = { note: () => {} },
): Promise<Planned> {
  const registry = await PolicyRegistry.fromFolder(options.policiesDir);
  const policy = registry.current(options.policyId);
  if (!policy)
    throw new UsageError(
      `--policy: unknown policy "${options.policyId}" (known: ${registry.ids().join(", ")})`,
    );
  const source = (["url", "endpoint-name", "model"] as const).find((k) => options.scoring?.[k] !== undefined);
  if (source && options.request === undefined)
    throw new UsageError(`--plan --${source} re-scores a cascade's drawn items: give it with --request N`);
  if (options.input !== undefined) {
    if (options.request !== undefined)
      throw new UsageError(
        "--request puts decisions into the review queue: give the decisions table, not --input",
      );
    const read = await readRows(options.input, policy);
    return { policy, plan: planLabels(policy, read.rows, options.goal), where: options.input, options };
  }
  const table = options.table!;
  const store = decisionStore(table, awsOptions(options.aws));
  const labelled = await reviewedLabels(store, policy, policy.calibratedAt);
  const now = systemClock();
  // A sample drawn already fixed the target: the latest one's threshold, whatever labels came since.
  const drawnFor = labelled.frames
    .filter((f) => !f.plan)
    .toSorted((a, b) => (a.drawnAt < b.drawnAt ? -1 : 1))
    .at(-1);
  const frame = await frameOf(store, policy, now);
  // A new registered plan is tested at its share of α, and the labels held do not count toward it.
  const others = otherVersionsOf(registry, policy);
  const round = await nextPlanRound(store, policy, others, now.toISOString());
  const tested = testedGoal(options.goal, round);
  const registration = { round, level: tested.confidence, waiting: labelled.waiting.certification };
  const plan = registeredView(
    planLabels(policy, labelled.rows, tested, frame, drawnFor?.minProbability),
    options.goal,
  );
  const supply = { perDay: 0, auditPerDay: 0, capped: false, spanMs: 0 };
  const day = { since: new Date(now.getTime() - DAY_MS).toISOString(), until: now.toISOString() };
  for await (const r of everyDecision(store, { ...day, policyId: policy.id, policyIds: [policy.id] })) {
    if (supply.perDay >= VOLUME_READ_CAP) {
      supply.capped = true;
      break;
    }
    supply.spanMs = Math.max(supply.spanMs, now.getTime() - Date.parse(r.createdAt));
    const automatic = r.route === "auto" || r.reason === "audit_sample";
    if (r.policyVersion !== policy.version || !automatic || !chosenAutomatable(r, policy)) continue;
    if ((r.topProbability ?? 0) < plan.threshold) continue;
    supply.perDay++;
    supply.auditPerDay += r.auditInclusionProbability ?? policy.auditSampleRate;
  }
  // Out of reach at this volume: no sample of the frame can give the certificate, so none is drawn.
  const sampled =
    options.request === undefined || plan.frame?.outOfReach
      ? {}
      : await drawWithAnswers(store, policy, plan.threshold, { ...options, others, round }, io.note);
  return { policy, plan, where: `the table ${table}`, supply, registration, ...sampled, options };
}

/**
 * Draws the certification sample and, for a cascade, gets the later model's answers on the drawn
 * items the first model decided (`rescoreDrawn`): the source the flags name is opened before
 * anything is drawn, so a wrong flag draws nothing.
 */
async function drawWithAnswers(
  store: ReturnType<typeof decisionStore>,
  policy: Policy,
  threshold: number,
  options: PlanOptions & { readonly others: readonly Policy[]; readonly round: number },
  note: (line: string) => void,
): Promise<Pick<Planned, "requested" | "drawn">> {
  const source = await openDrawnRescore(policy, options.scoring);
  try {
    const requested = await requestCertification(
      { store, now: systemClock },
      {
        policy,
        size: options.request!,
        minProbability: threshold,
        order: options.order,
        goal: options.goal,
        otherVersions: options.others,
        round: options.round,
      },
    ).catch((error: unknown) => {
      // Another operator's plan of the same claim came first: a clear line, not a stack.
      throw error instanceof PlanRoundMovedError ? new CommandError(error.message) : error;
    });
    const target = { policy, table: options.table!, policiesDir: options.policiesDir };
    const drawn = await rescoreDrawn(store, { ...target, sample: requested.frame.sample }, source, note);
    return { requested, ...(drawn ? { drawn } : {}) };
  } finally {
    await source?.close();
  }
}

/**
 * The calibrated top probability of each decision of the version so far whose top option may be
 * automated: what a certification sample can draw from, at any threshold.
 */
async function frameOf(
  store: ReturnType<typeof decisionStore>,
  policy: Policy,
  now: Date,
): Promise<number[]> {
  const frame: number[] = [];
  const window = { since: "1970-01-01T00:00:00.000Z", until: now.toISOString() };
  for await (const r of everyDecision(store, { ...window, policyId: policy.id, policyIds: [policy.id] }))
    if (r.policyVersion === policy.version && r.topProbability !== undefined && chosenAutomatable(r, policy))
      frame.push(r.topProbability);
  return frame;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** "out of reach at this volume: ..." when the labels needed exceed the decisions there are. */
function reachLines(planned: Planned): string[] {
  const { plan, policy, options } = planned;
  if (!plan.frame?.outOfReach) return [];
  const o = plan.observed;
  const rate = o
    ? `the observed rate is ${pct(o.rate)} (${o.errors} wrong of ${o.units} automatable labels at or above ${plan.threshold})`
    : "no rate is observed yet";
  const needed =
    plan.needed === null
      ? "no number of labels would do"
      : `about ${plan.needed.toLocaleString("en-US")} labels of automated decisions are needed`;
  return [
    `  out of reach at this volume: ${needed}, and ${policy.id}@${policy.version} has made ${plan.frame.decisions.toLocaleString("en-US")} decisions at or above ${plan.threshold} whose option may be automated; ${rate}. Wait for more decisions, or aim at a higher target than ${pct(plan.maxError)}${options.request !== undefined ? "; no sample was drawn" : ""}`,
  ];
}

/** The plan in lines, the request command it suggests, and the sample when one was drawn. */
export function printPlan(planned: Planned): Printed {
  const { policy, plan, supply, requested, options } = planned;
  const target = `wrong automatic actions ≤ ${pct(plan.maxError)} with ${Number((plan.confidence * 100).toFixed(2))}% confidence`;
  const lines = [
    `${policy.id}@${policy.version}: a certificate of ${target} needs labels of decisions the policy would automate, drawn evenly (a certification sample):`,
    `  ${plan.zeroErrors} with no error at all (the fewest whose exact bound${planned.registration ? ` at ${Number((planned.registration.level * 100).toFixed(2))}%` : ""} is under ${pct(plan.maxError)})`,
  ];
  const o = plan.observed;
  if (o)
    lines.push(
      plan.needed === null
        ? `  at the error rate seen so far (${pct(o.rate)}, ${o.errors} wrong of ${o.units} automatable labels at or above ${plan.threshold}) no number will do: it is not below the target`
        : `  at the error rate seen so far (${pct(o.rate)}, ${o.errors} wrong of ${o.units} automatable labels at or above ${plan.threshold}): about ${plan.needed}`,
    );
  if (plan.fixed)
    lines.push(
      `  the target stays at or above ${plan.threshold}, the threshold the last certification sample was drawn for: labels gathered since do not move it`,
    );
  else if (plan.threshold !== policy.autoThreshold)
    lines.push(
      `  it aims at ${plan.threshold}, above the policy's own ${policy.autoThreshold}: of the thresholds within reach, the labels held leave the fewest labels to get there; a sample is drawn at or above it`,
    );
  const kinds = plan.held.kinds.file === plan.held.automatable ? "" : kindsText(plan.held.kinds);
  lines.push(
    `  held in ${planned.where}: ${counted(plan.held.labels, "label")}; ${plan.held.automatable} of decisions it would automate at or above ${plan.threshold}${kinds ? ` (${kinds})` : ""}, worth about ${plan.held.worth} evenly drawn labels`,
  );
  if (plan.remaining !== null) {
    const days =
      supply && supply.auditPerDay > 0
        ? supplyText(supply, plan.remaining)
        : supply
          ? "; no audit sample is drawn at or above it, so they come only from a certification sample"
          : "";
    lines.push(
      plan.remaining === 0
        ? "  still needed: none: the labels held should give the certificate; propose it"
        : `  still needed: about ${plan.remaining}${days}`,
    );
    if (!requested && supply && plan.remaining > 0 && !plan.frame?.outOfReach)
      lines.push(
        `  ask reviewers for them now: npx decide calibrate --plan --policy ${policy.id} --max-auto-error ${plan.maxError} --confidence ${plan.confidence} --request ${plan.remaining}`,
      );
  }
  lines.push(...registrationLines(planned.registration, plan.confidence));
  // What reviewers' own mistakes cost the target, and what double review buys.
  lines.push(
    ...reviewerPlanLines(plan.maxError, undefined, policy.certificationReviewers).map((l) => `  ${l}`),
  );
  lines.push(...reachLines(planned));
  if (requested)
    lines.push(
      ...requestedLines(requested, options.order),
      ...(requested.plan ? registeredRequestLines(requested.plan, requested.frame.sample) : []),
    );
  // The later model's answers on the drawn items: re-scored, or the one line that says how to get them.
  const drawn = planned.drawn ? drawnRescoreLines(planned.drawn) : { lines: [], exitCode: 0 };
  lines.push(...drawn.lines);
  return { lines, exitCode: drawn.exitCode };
}

function requestedLines(r: CertificationRequested, order: QueueOrder): string[] {
  const rates = r.frame.rates.filter((x) => x > 0);
  const [low, high] = [Math.min(...rates), Math.max(...rates)];
  const chance = rates.length === 0 ? "0%" : low === high ? pct(low) : `${pct(low)} to ${pct(high)}`;
  const bands = r.frame.rates.length;
  return [
    `certification sample ${r.frame.sample}: ${r.queued + r.skipped} drawn from ${r.population} decisions at or above ${r.frame.minProbability} never chosen for a label (${counted(bands, "band")}, chance ${chance}${bands > 1 ? " each" : ""}); ${r.chosenBefore} already chosen (escalated, audited or drawn before: waiting or labelled) not drawn again`,
    `  ${r.queued} automated ones put into the review queue${order === "first" ? ", first" : ""} (their actions stand), ${r.skipped} left out (action still being applied)`,
    '  reviewers see them marked "certification sample"; once labelled: npx decide calibrate --from-table ... --propose --max-auto-error ...',
  ];
}

/** Every version of `policy` in `registry` but its own (their plans may share its error budget). */
function otherVersionsOf(registry: PolicyRegistry, policy: Policy): Policy[] {
  const others: Policy[] = [];
  for (let v = 1; v < policy.version; v++) {
    const other = registry.version(policy.id, v);
    if (other) others.push(other);
  }
  return others;
}

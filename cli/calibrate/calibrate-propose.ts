/**
 * `decide calibrate --from-table TABLE --propose`: the scheduled recalibration run by hand (the
 * same use case as the Recalibrate function), writing proposals to a local folder (applying one
 * is `calibrate-apply.ts`).
 */
import { join, resolve } from "node:path";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import type { CalibrationSummary } from "../../shared/domain/calibration/calibrate.ts";
import type { ThresholdGoal } from "../../shared/domain/calibration/threshold.ts";
import { systemClock } from "../../shared/domain/clock.ts";
import type { DecisionStore } from "../../shared/domain/decision-store.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import {
  type ProposalOutcome,
  proposeCalibrations,
} from "../../shared/use-cases/calibration/propose-calibration.ts";
import { registeredGoalProblem } from "../../shared/use-cases/calibration/registered-certification.ts";
import { UsageError } from "../args.ts";
import { awsOptions, decisionStore, publisherTo } from "../aws.ts";
import type { Printed } from "../command.ts";
import { fitHeadline, isSmallSet } from "./calibrate-headline.ts";
import { automatedShare, thresholdLines } from "./calibrate-print.ts";

/** What `decide calibrate --propose` was asked. */
export interface ProposeOptions {
  readonly table: string;
  readonly policiesDir: string;
  readonly policyId: string | undefined;
  readonly out: string;
  readonly minLabels: number;
  readonly goal: ThresholdGoal;
  readonly eventBus: string | undefined;
  readonly aws: { region?: string | undefined; profile?: string | undefined };
}

/** Runs the proposal for one policy or all; returns what happened to each. */
export async function proposeFromTable(options: ProposeOptions): Promise<ProposalOutcome[]> {
  const registry = await PolicyRegistry.fromFolder(options.policiesDir);
  if (options.policyId !== undefined && !registry.current(options.policyId))
    throw new UsageError(
      `--policy: unknown policy "${options.policyId}" (known: ${registry.ids().join(", ")})`,
    );
  const client = awsOptions(options.aws);
  await refuseOtherTarget(registry, decisionStore(options.table, client), options);
  return proposeCalibrations(
    {
      policies: registry,
      store: decisionStore(options.table, client),
      objects: new FsObjectStore(resolve(options.out)),
      now: systemClock,
      ...(options.eventBus ? { publisher: publisherTo(options.eventBus, client) } : {}),
    },
    {
      minLabels: options.minLabels,
      goal: options.goal,
      ...(options.policyId ? { policyId: options.policyId } : {}),
    },
  );
}

/**
 * Refuses `--propose --max-auto-error X` where a policy's version has a registered plan drawn for
 * another target: its certificate tests only the plan's goal, so proposing at X would give a
 * certificate of another claim than the one asked. Nothing is written.
 */
async function refuseOtherTarget(registry: PolicyRegistry, store: DecisionStore, options: ProposeOptions) {
  const { goal } = options;
  if (goal.kind !== "max-auto-error") return;
  const now = systemClock();
  for (const id of options.policyId !== undefined ? [options.policyId] : registry.ids()) {
    const problem = await registeredGoalProblem(store, registry.current(id)!, goal, now);
    if (problem) throw new UsageError(`--propose --max-auto-error ${goal.maxError}: ${problem}`);
  }
}

/** What happened to each policy; and whether "Calibration Proposed" was sent. */
export function printProposals(outcomes: readonly ProposalOutcome[], options: ProposeOptions): Printed {
  const lines = outcomes.flatMap((outcome) => outcomeLines(outcome, options.out));
  if (options.eventBus && outcomes.some((o) => o.status === "proposed"))
    lines.push(`"Calibration Proposed" sent to the event bus ${options.eventBus}`);
  return { lines, exitCode: 0 };
}

/** "proposed version 2 from 1200 labels: ECE ..."; below `SMALL_LABEL_SET` labels, the count and fold gains first. */
function proposedLead(s: CalibrationSummary, version: number): string {
  return isSmallSet(s)
    ? `${fitHeadline(s)}: proposed version ${version}`
    : `proposed version ${version} from ${fitHeadline(s).replace("labels;", "labels:")}`;
}

/** One policy's outcome, in a few lines. */
function outcomeLines(outcome: ProposalOutcome, out: string): string[] {
  const head = `${outcome.policyId}@${outcome.version}`;
  switch (outcome.status) {
    case "not_enough_labels":
      return [
        `${head}: ${outcome.labels} labels ${outcome.calibrated ? "since it was calibrated" : "of this version"}, ${outcome.needed} needed: no proposal`,
      ];
    case "no_change":
      return [`${head}: ${outcome.labels} labels: ${outcome.verdict}; the threshold stays: no proposal`];
    case "refused":
      return [
        `${head}: ${outcome.labels} labels: the fit would be refused by apply, nothing written: ${outcome.reasons.join("; ")}`,
      ];
    case "already_proposed":
      return [
        `${head}: already proposed from these ${outcome.labels} labels: ${join(out, outcome.keys.policy)}`,
      ];
  }
  const s = outcome.summary!;
  const where = join(out, outcome.keys.policy);
  return [
    `${head}: ${proposedLead(s, outcome.proposedVersion!)}, temperature ${s.proposedPolicy.temperature}, autoThreshold ${s.proposedPolicy.autoThreshold}${automatedShare(s)}`,
    `  calibration: ${s.comparison.verdict}`,
    ...thresholdLines(s),
    `  policy: ${where}\n  report: ${join(out, outcome.keys.report)}`,
    // Production is untouched until a person applies the proposal (the verdict above may say
    // `no change` of the map while the threshold or certificate changes).
    `  not applied: read the report, then  npx decide calibrate --apply-proposal ${where}`,
  ];
}

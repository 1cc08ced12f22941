/**
 * `decide calibrate --from-table TABLE --propose`: the scheduled recalibration run by hand (the
 * same use case as the Recalibrate function), writing proposals to a local folder (applying one
 * is `calibrate-apply.ts`).
 */
import { join, resolve } from "node:path";
import { FsObjectStore } from "../shared/adapters/fs-object-store.ts";
import type { ThresholdGoal } from "../shared/domain/calibration/threshold.ts";
import { systemClock } from "../shared/domain/clock.ts";
import type { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { type ProposalOutcome, proposeCalibrations } from "../shared/use-cases/propose-calibration.ts";
import { awsOptions, decisionStore, publisherTo } from "./aws.ts";

/** Runs the proposal for one policy or all; prints what happened to each. */
export async function proposeFromTable(options: {
  readonly table: string;
  readonly registry: PolicyRegistry;
  readonly policyId: string | undefined;
  readonly out: string;
  readonly minLabels: number;
  readonly goal: ThresholdGoal;
  readonly eventBus: string | undefined;
  readonly aws: { region?: string | undefined; profile?: string | undefined };
}): Promise<number> {
  const client = awsOptions(options.aws);
  const outcomes = await proposeCalibrations(
    {
      policies: options.registry,
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
  for (const outcome of outcomes) printOutcome(outcome, options.out);
  if (options.eventBus && outcomes.some((o) => o.status === "proposed"))
    console.log(`"Calibration Proposed" sent to ${options.eventBus}`);
  return 0;
}

/** One policy's outcome, in a few lines. */
function printOutcome(outcome: ProposalOutcome, out: string): void {
  const head = `${outcome.policyId}@${outcome.version}`;
  switch (outcome.status) {
    case "not_enough_labels":
      console.log(
        `${head}: ${outcome.labels} labels since it was calibrated, ${outcome.needed} needed: no proposal`,
      );
      return;
    case "no_change":
      console.log(`${head}: ${outcome.labels} labels: ${outcome.verdict}; the threshold stays: no proposal`);
      return;
    case "refused":
      console.log(
        `${head}: ${outcome.labels} labels: the fit would be refused by apply, nothing written: ${outcome.reasons.join("; ")}`,
      );
      return;
    case "already_proposed":
      console.log(
        `${head}: already proposed from these ${outcome.labels} labels: ${join(out, outcome.keys.policy)}`,
      );
      return;
  }
  const s = outcome.summary!;
  const where = join(out, outcome.keys.policy);
  console.log(
    `${head}: proposed version ${outcome.proposedVersion} from ${outcome.labels} labels: ECE ${s.current.ece.toFixed(3)} now -> ${s.calibrated.ece.toFixed(3)} proposed (out of fold), temperature ${s.proposedPolicy.temperature}, autoThreshold ${s.proposedPolicy.autoThreshold} (${(s.threshold.coverage * 100).toFixed(1)}% automated)`,
  );
  console.log(`  calibration: ${s.comparison.verdict}`);
  for (const note of s.threshold.notes) console.log(`  ${s.certificate ? "" : "note: "}${note}`);
  console.log(`  policy: ${where}\n  report: ${join(out, outcome.keys.report)}`);
  // Production is untouched until a person applies the proposal (the verdict above may say
  // `no change` of the map while the threshold or certificate changes).
  console.log(`  not applied: read the report, then  npx decide calibrate --apply-proposal ${where}`);
}

/**
 * `decide calibrate --from-table TABLE --propose`: the scheduled recalibration run by hand (the
 * same use case as the Recalibrate function), writing proposals to a local folder; and
 * `decide calibrate --apply-proposal FILE`: the explicit step that turns a reviewed proposal into
 * a policy file (then deploy, or restart the local mode, to serve it).
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { FsObjectStore } from "../shared/adapters/fs-object-store.ts";
import type { ThresholdGoal } from "../shared/domain/calibration/threshold.ts";
import { PolicyError, parsePolicy } from "../shared/domain/policy/policy.ts";
import type { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { proposeCalibrations } from "../shared/use-cases/propose-calibration.ts";
import { UsageError } from "./args.ts";
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
      ...(options.eventBus ? { publisher: publisherTo(options.eventBus, client) } : {}),
    },
    {
      minLabels: options.minLabels,
      goal: options.goal,
      ...(options.policyId ? { policyId: options.policyId } : {}),
    },
  );
  for (const outcome of outcomes) {
    const head = `${outcome.policyId}@${outcome.version}`;
    if (outcome.status === "not_enough_labels") {
      console.log(
        `${head}: ${outcome.labels} labels since it was calibrated, ${outcome.needed} needed: no proposal`,
      );
      continue;
    }
    const where = join(options.out, outcome.keys.policy);
    if (outcome.status === "already_proposed") {
      console.log(`${head}: already proposed from these ${outcome.labels} labels: ${where}`);
      continue;
    }
    const s = outcome.summary!;
    console.log(
      `${head}: proposed version ${outcome.proposedVersion} from ${outcome.labels} labels: ECE ${s.raw.ece.toFixed(3)} raw -> ${s.calibrated.ece.toFixed(3)} calibrated (out of fold), temperature ${s.proposedPolicy.temperature}, autoThreshold ${s.proposedPolicy.autoThreshold} (${(s.threshold.coverage * 100).toFixed(1)}% automated)`,
    );
    for (const note of s.threshold.notes) console.log(`  note: ${note}`);
    console.log(`  policy: ${where}\n  report: ${join(options.out, outcome.keys.report)}`);
    console.log(`  nothing changed: apply with  npx decide calibrate --apply-proposal ${where}`);
  }
  if (options.eventBus && outcomes.some((o) => o.status === "proposed"))
    console.log(`"Calibration Proposed" sent to ${options.eventBus}`);
  return 0;
}

/**
 * Writes a proposed policy into the policies folder as `<id>.v<N>.json`, after checking that it
 * is a valid policy and the next version of one the folder holds; never over an existing file.
 */
export async function applyProposal(
  file: string,
  registry: PolicyRegistry,
  policiesDir: string,
): Promise<number> {
  const text = await readFile(file, "utf8").catch((error: unknown) => {
    throw new UsageError(`cannot read --apply-proposal ${file}: ${(error as Error).message}`);
  });
  let proposed: ReturnType<typeof parsePolicy>;
  try {
    proposed = parsePolicy(JSON.parse(text), file);
  } catch (error) {
    if (error instanceof PolicyError || error instanceof SyntaxError)
      throw new UsageError(`${file} is not a valid policy: ${error.message}`);
    throw error;
  }
  const current = registry.current(proposed.id);
  if (!current) throw new UsageError(`${file}: policy "${proposed.id}" is not in ${policiesDir}`);
  if (proposed.version !== current.version + 1)
    throw new UsageError(
      `${file} proposes version ${proposed.version} of ${proposed.id}, but ${policiesDir} is at version ${current.version}: only version ${current.version + 1} applies`,
    );
  const target = join(policiesDir, `${proposed.id}.v${proposed.version}.json`);
  if (existsSync(target)) throw new UsageError(`${target} exists already; refusing to overwrite it`);
  await writeFile(target, `${JSON.stringify(proposed, null, 2)}\n`);
  console.log(
    `wrote ${target}: ${proposed.id} version ${proposed.version} (temperature ${current.temperature} -> ${proposed.temperature}, autoThreshold ${current.autoThreshold} -> ${proposed.autoThreshold}).`,
  );
  console.log("Restart `npm start`, or deploy (npx cdk deploy), to decide new items with it.");
  return 0;
}

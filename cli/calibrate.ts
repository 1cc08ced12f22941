/**
 * `decide calibrate`: fits a policy's temperature and auto threshold from labelled decisions,
 * writes a readable HTML report and a JSON summary, and proposes the next policy version (written
 * only with --apply, never over an existing file).
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { PolicyAudit } from "../shared/domain/audit/policy-audit.ts";
import {
  type CalibrationSummary,
  calibratePolicy,
  TooFewLabelsError,
} from "../shared/domain/calibration/calibrate.ts";
import { type MassFloorProposal, proposeMassFloor } from "../shared/domain/calibration/off-options.ts";
import { checkProposal } from "../shared/domain/calibration/proposal-check.ts";
import { MIN_FIT_LABELS } from "../shared/domain/calibration/ranges.ts";
import { renderReport } from "../shared/domain/calibration/report.ts";
import type { Policy } from "../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { recentAudit } from "../shared/use-cases/audit-estimate.ts";
import { FULL_TRUST_LABELS } from "../shared/use-cases/propose-calibration.ts";
import { reviewedLabels } from "../shared/use-cases/reviewed-labels.ts";
import { CommandError, integerFlag, requiredFlag, settingFrom, UsageError } from "./args.ts";
import { awsOptions, decisionStore } from "./aws.ts";
import { applyProposal } from "./calibrate-apply.ts";
import { calibrateCheck } from "./calibrate-check.ts";
import { goalOf } from "./calibrate-goal.ts";
import { type CalibrationInput, readRows, scoreStatesAndPrior } from "./calibrate-input.ts";
import { printCalibration } from "./calibrate-print.ts";
import { proposeFromTable } from "./calibrate-propose.ts";
import { SCORING_FLAGS } from "./calibrate-scoring.ts";

/** The usage text of `decide calibrate`. */
export const calibrateUsage = `decide calibrate --input labelled.jsonl --policy ID
                 [--max-auto-error 0.02 [--confidence 0.95] | --target-accuracy 0.97 | --cost-wrong 20 --cost-review 1]
                 [--model file.gguf | --endpoint-name NAME | --url URL] [--concurrency 4] [--resume FILE]
                 [--prior] [--table DECISIONS_TABLE] [--policies-dir events/policies] [--out calibration-out]
                 [--bins 10] [--binning equal-width|equal-mass] [--apply]

Each input line: {"label": "<option id>", "logits": [...]} (stored distribution, in the policy's option order),
or {"label", "probabilities": {"<id>": p}}, or {"label", "state": ...}: states are scored as the pipeline
would score them, in process (--model), on the deployed SageMaker endpoint (--endpoint-name, with --region
and --profile), or on any System One server (--url http://host:8080). Remote scoring sends --concurrency
requests at a time with retries, shows progress, and keeps scored rows in --resume (default
<out>/<policy>.scored.jsonl) so that a stopped run resumes where it stopped.
Rows that do not fit the policy are reported with their line numbers, not dropped silently; a row may
name the "modelSha256" and "promptVersion" that scored it (scored states and table rows always do).
Every candidate (temperature; with --prior, the prior; vector scaling, with 20 labels per option) is
compared out of fold with the policy as it stands, and proposed only when it beats it by more than the
fold-to-fold spread; otherwise "no change: ..." with the figures.
--max-auto-error E: the lowest auto threshold whose rate of wrong automatic actions is at most E with
--confidence (Learn then Test, exact binomial bound); the proposal carries the certificate. None
qualifies: every item stays with people, and the command says how many labels would be needed.
--prior scores content-free items ("N/A", "[MASK]", "-") on the same source, divides that prior out of
every decision and proposes it as the policy's "prior"; the report shows what it changes.
Writes <out>/<policy>.report.html and <out>/<policy>.summary.json; --apply writes the proposed
policy version into the policies folder.
Example: npx decide calibrate --input events/calibration/ticket-routing.labelled.jsonl --policy ticket-routing

decide calibrate --from-table DECISIONS_TABLE --propose [--policy ID] [--min-labels 200] [--out calibration-out] [--event-bus NAME]
Gathers the labels reviewers gave (in --from-table, else the DECISIONS_TABLE npm start exports)
since each policy version was calibrated; with at least --min-labels (10 or more; under 200 a
fifth of items stays with people), writes a proposed next version with its report under
<out>/<policy>/ and emits "Calibration Proposed" when a bus is named (--max-auto-error and
--confidence as above). Nothing is proposed when neither the calibration nor the threshold would
change. Changes nothing.

decide calibrate --apply-proposal <out>/<policy>/v2-from-N-labels/policy.json [--policies-dir events/policies]
The explicit step: checks that the proposal changes only calibration fields (temperature, prior,
optionBias, autoThreshold, predictionSet, minAllowedTokenMass, certificate, baseline, calibratedAt),
each within its documented range, refuses anything else naming the field, writes it as the policy's
next version file and prints what changed, field by field.

decide calibrate --check --baseline <out>/<policy>.summary.json --recent recent-decisions.jsonl [--event-bus NAME]
Compares recent decision records (distribution, route, allowedTokenMass) with the calibration
baseline (rows of another policy, version or options are refused); exits 3 and emits "Calibration Drift" (when a bus is named) if they drifted.`;

/** The command's flags. */
const CALIBRATE_FLAGS = {
  ...SCORING_FLAGS,
  input: { type: "string" },
  policy: { type: "string" },
  "policies-dir": { type: "string", default: "events/policies" },
  out: { type: "string", default: "calibration-out" },
  "target-accuracy": { type: "string" },
  "cost-wrong": { type: "string" },
  "cost-review": { type: "string" },
  "max-auto-error": { type: "string" },
  confidence: { type: "string" },
  bins: { type: "string", default: "10" },
  binning: { type: "string", default: "equal-width" },
  apply: { type: "boolean", default: false },
  check: { type: "boolean", default: false },
  baseline: { type: "string" },
  recent: { type: "string" },
  "event-bus": { type: "string" },
  table: { type: "string" },
  "from-table": { type: "string" },
  propose: { type: "boolean", default: false },
  "min-labels": { type: "string" },
  "apply-proposal": { type: "string" },
  prior: { type: "boolean", default: false },
} as const;

/** The parsed flags. */
type CalibrateFlags = ReturnType<typeof parseCalibrateFlags>;

function parseCalibrateFlags(argv: string[]) {
  return parseArgs({ args: argv, options: CALIBRATE_FLAGS, strict: true }).values;
}

/** Runs the command; returns the exit code. */
export async function calibrateCommand(argv: string[]): Promise<number> {
  const values = parseCalibrateFlags(argv);
  if (values.check) {
    return calibrateCheck({
      baseline: requiredFlag("baseline", values.baseline),
      recent: requiredFlag("recent", values.recent),
      eventBus: values["event-bus"] ?? process.env.EVENT_BUS_NAME,
    });
  }
  const policiesDir = values["policies-dir"];
  const registry = await PolicyRegistry.fromFolder(policiesDir);
  const table = values["from-table"] ?? values.table;
  if (values["apply-proposal"]) return applyProposal(values["apply-proposal"], registry, policiesDir);
  if (values.propose) {
    return proposeFromTable({
      // The reviewers' labels: the table named, else the one `npm start` exports.
      table: settingFrom("from-table", table, "DECISIONS_TABLE"),
      registry,
      policyId: values.policy,
      out: values.out,
      minLabels: integerFlag(
        "min-labels",
        values["min-labels"],
        FULL_TRUST_LABELS,
        MIN_FIT_LABELS,
        1_000_000,
      ),
      goal: goalOf(values),
      eventBus: values["event-bus"] ?? process.env.EVENT_BUS_NAME,
      aws: values,
    });
  }
  return calibrateFromLabels(values, registry, table);
}

/** The bins of the metrics, from the flags. */
function binsOf(values: CalibrateFlags): { bins: number; binning: "equal-width" | "equal-mass" } {
  const binning = values.binning;
  if (binning !== "equal-width" && binning !== "equal-mass")
    throw new UsageError(`--binning must be equal-width or equal-mass`);
  const bins = Number(values.bins);
  if (!Number.isInteger(bins) || bins < 2 || bins > 50)
    throw new UsageError("--bins must be an integer from 2 to 50");
  return { bins, binning };
}

/** The labelled rows: from the decisions table or the input file, states and the prior scored. */
async function gatherLabels(
  values: CalibrateFlags,
  policy: Policy,
  table: string | undefined,
): Promise<CalibrationInput> {
  const base: CalibrationInput = table
    ? { ...(await reviewedLabels(decisionStore(table, awsOptions(values)), policy)), states: [] }
    : {
        ...(await readRows(requiredFlag("input", values.input), policy)),
        agreement: undefined,
        masses: [],
      };
  if (base.states.length === 0 && !values.prior) return base;
  const resume = values.resume ?? join(values.out, `${policy.id}.scored.jsonl`);
  return scoreStatesAndPrior(values, policy, base, resume);
}

/** Calibrates one policy from labelled rows, writes the report and summary, and maybe the version. */
async function calibrateFromLabels(
  values: CalibrateFlags,
  registry: PolicyRegistry,
  table: string | undefined,
): Promise<number> {
  const policyId = requiredFlag("policy", values.policy);
  const policy = registry.current(policyId);
  if (!policy)
    throw new UsageError(`--policy: unknown policy "${policyId}" (known: ${registry.ids().join(", ")})`);
  const { bins, binning } = binsOf(values);
  const input = await gatherLabels(values, policy, table);
  for (const p of input.problems) console.error(`line ${p.line}: skipped: ${p.reason}`);
  if (input.problems.length)
    console.error(`${input.problems.length} rows skipped, ${input.rows.length} used`);
  const summary = fitPolicy(policy, input, { goal: goalOf(values), bins, binning });
  const offOptions = input.masses.length > 0 ? proposeMassFloor(input.masses) : undefined;
  // From the decisions table, the report also shows the policy's live error rate from audits.
  const live = table
    ? await recentAudit(
        { store: decisionStore(table, awsOptions(values)), policies: registry },
        policy.id,
        new Date(),
      )
    : undefined;
  const paths = await writeOutputs(values.out, policy, summary, { ...input, offOptions, live });
  printCalibration(policy, summary, { agreement: input.agreement, offOptions }, paths);
  return writeProposedVersion(values.apply, values["policies-dir"], policy, summary.proposedPolicy);
}

/** The fit; too few rows is a usage error (one line, no stack). */
function fitPolicy(
  policy: Policy,
  input: CalibrationInput,
  options: Omit<Parameters<typeof calibratePolicy>[2], "now" | "prior">,
): CalibrationSummary {
  try {
    return calibratePolicy(policy, input.rows, {
      ...options,
      now: new Date(),
      ...(input.prior ? { prior: input.prior } : {}),
    });
  } catch (error) {
    if (error instanceof TooFewLabelsError)
      throw new UsageError(
        `${policy.id}: ${error.labels} labelled rows fit the policy; calibration needs at least ${error.needed}`,
        { cause: error },
      );
    throw error;
  }
}

/** Writes the report and the JSON summary; returns their paths. */
async function writeOutputs(
  out: string,
  policy: Policy,
  summary: CalibrationSummary,
  input: CalibrationInput & { offOptions: MassFloorProposal | undefined; live: PolicyAudit | undefined },
): Promise<{ report: string; summary: string }> {
  await mkdir(out, { recursive: true });
  const paths = {
    report: join(out, `${policy.id}.report.html`),
    summary: join(out, `${policy.id}.summary.json`),
  };
  const { agreement, offOptions, live } = input;
  await writeFile(paths.report, renderReport(policy, summary, agreement, offOptions, live));
  await writeFile(
    paths.summary,
    `${JSON.stringify({ ...summary, ...(agreement ? { reviewerAgreement: agreement } : {}), ...(offOptions ? { offOptions } : {}), skipped: input.problems }, null, 2)}\n`,
  );
  return paths;
}

/**
 * With --apply, writes the proposed version into the policies folder (never over a file), after
 * the check `--apply-proposal` makes.
 */
async function writeProposedVersion(
  apply: boolean,
  policiesDir: string,
  current: Policy,
  proposed: Policy,
): Promise<number> {
  const policyPath = join(policiesDir, `${proposed.id}.v${proposed.version}.json`);
  const refusals = checkProposal(current, proposed).refusals;
  if (refusals.length > 0)
    throw new CommandError(`the proposed version would be refused by apply: ${refusals.join("; ")}`);
  if (!apply) {
    console.log(
      `proposed policy version ${proposed.version} not written; rerun with --apply to write ${policyPath}`,
    );
    return 0;
  }
  if (existsSync(policyPath)) throw new UsageError(`${policyPath} exists already; refusing to overwrite it`);
  await writeFile(policyPath, `${JSON.stringify(proposed, null, 2)}\n`);
  console.log(`wrote ${policyPath}`);
  return 0;
}

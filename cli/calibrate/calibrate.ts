/**
 * `decide calibrate`: fits a policy's temperature and auto threshold from labelled decisions,
 * writes a readable HTML report and a JSON summary, and proposes the next policy version (written
 * only with --apply, never over an existing file). Its modes (a fit, `--propose`, `--plan`,
 * `--rescore`, `--apply-proposal`, `--check`) each have their own run and print; this file parses
 * the flags (their table and the usage text: calibrate-usage.ts) into one of them.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { MIN_FIT_LABELS } from "../../shared/domain/calibration/ranges.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { FULL_TRUST_LABELS } from "../../shared/use-cases/calibration/propose-calibration.ts";
import { QUEUE_ORDERS, type QueueOrder } from "../../shared/use-cases/calibration/request-certification.ts";
import { integerFlag, requiredFlag, settingFrom, UsageError } from "../args.ts";
import type { CommandEnv, CommandIo, OneShotCommand, Printed } from "../command.ts";
import { type Applied, applyProposal, type LabelsAtHand, printApplied } from "./calibrate-apply.ts";
import { type Checked, type CheckOptions, calibrateCheck, printChecked } from "./calibrate-check.ts";
import { type FitOptions, type Fitted, fitFromLabels } from "./calibrate-fit.ts";
import { goalOf } from "./calibrate-goal.ts";
import { type Planned, type PlanOptions, planFromLabels, printPlan } from "./calibrate-plan.ts";
import { printFitted } from "./calibrate-print.ts";
import { type ProposeOptions, printProposals, proposeFromTable } from "./calibrate-propose.ts";
import {
  printRescored,
  type RescoreOptions,
  type RescoreRun,
  rescoreFromTable,
} from "./calibrate-rescore.ts";
import { CALIBRATE_FLAGS, type CalibrateFlags } from "./calibrate-usage.ts";

export { calibrateUsage } from "./calibrate-usage.ts";

/** What `decide calibrate` was asked: one of its modes. */
type CalibrateOptions =
  | ({ readonly mode: "check" } & CheckOptions)
  | {
      readonly mode: "apply-proposal";
      readonly file: string;
      readonly policiesDir: string;
      readonly labels: LabelsAtHand;
      readonly acceptNoAutomation: boolean;
    }
  | ({ readonly mode: "propose" } & ProposeOptions)
  | ({ readonly mode: "plan" } & PlanOptions)
  | ({ readonly mode: "rescore" } & RescoreOptions)
  | ({ readonly mode: "fit" } & FitOptions);

/** What the mode found. */
type Calibrated =
  | { readonly mode: "check"; readonly checked: Checked }
  | { readonly mode: "apply-proposal"; readonly applied: Applied }
  | { readonly mode: "propose"; readonly outcomes: Awaited<ReturnType<typeof proposeFromTable>> }
  | { readonly mode: "plan"; readonly planned: Planned }
  | { readonly mode: "rescore"; readonly run: RescoreRun }
  | { readonly mode: "fit"; readonly fitted: Fitted };

function parse(argv: string[], env: CommandEnv): CalibrateOptions {
  const values = parseArgs({ args: argv, options: CALIBRATE_FLAGS, strict: true }).values;
  const eventBus = values["event-bus"] ?? env[FUNCTION_ENV.EVENT_BUS_NAME];
  if (values.check) {
    const baseline = requiredFlag("baseline", values.baseline);
    return { mode: "check", baseline, recent: requiredFlag("recent", values.recent), eventBus };
  }
  const policiesDir = values["policies-dir"];
  const table = values["from-table"] ?? values.table;
  if (values["apply-proposal"]) {
    // The certificate's labels, where they are at hand: the table named (else the one `npm
    // start` exports), or the labelled file.
    const input = values.input;
    const labels = {
      table: input === undefined ? (table ?? env[FUNCTION_ENV.DECISIONS_TABLE]) : undefined,
      input,
    };
    const aws = { region: values.region, profile: values.profile };
    return {
      mode: "apply-proposal",
      file: values["apply-proposal"],
      policiesDir,
      labels: { ...labels, aws },
      acceptNoAutomation: values["accept-no-automation"],
    };
  }
  if (values.plan) return { mode: "plan", ...planOptions(values, table, env) };
  if (values.rescore)
    return {
      mode: "rescore",
      policyId: requiredFlag("policy", values.policy),
      policiesDir,
      table: settingFrom("from-table", table, FUNCTION_ENV.DECISIONS_TABLE, env),
      scoring: values,
    };
  if (values.propose) {
    return {
      mode: "propose",
      // The reviewers' labels: the table named, else the one `npm start` exports.
      table: settingFrom("from-table", table, FUNCTION_ENV.DECISIONS_TABLE, env),
      policiesDir,
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
      eventBus,
      aws: { region: values.region, profile: values.profile },
    };
  }
  return { mode: "fit", ...fitOptions(values, table) };
}

/** The plan's options: a certified goal, and the table (else DECISIONS_TABLE) or a labelled file. */
function planOptions(values: CalibrateFlags, table: string | undefined, env: CommandEnv): PlanOptions {
  const goal = goalOf(values);
  if (goal.kind !== "max-auto-error")
    throw new UsageError("--plan needs --max-auto-error (and --confidence, 0.95 by default)");
  const order = values["queue-order"];
  if (!QUEUE_ORDERS.includes(order as QueueOrder))
    throw new UsageError(`--queue-order must be ${QUEUE_ORDERS.join(" or ")}, got "${order}"`);
  const input = values.input;
  return {
    policyId: requiredFlag("policy", values.policy),
    policiesDir: values["policies-dir"],
    goal: { maxError: goal.maxError, confidence: goal.confidence },
    input,
    table:
      input === undefined ? settingFrom("from-table", table, FUNCTION_ENV.DECISIONS_TABLE, env) : undefined,
    request: values.request === undefined ? undefined : integerFlag("request", values.request, 0, 1, 100_000),
    order: order as QueueOrder,
    aws: { region: values.region, profile: values.profile },
    scoring: values,
  };
}

/** A fit's options; the goal and the bins checked before anything is read. */
function fitOptions(values: CalibrateFlags, table: string | undefined): FitOptions {
  const policyId = requiredFlag("policy", values.policy);
  const { bins, binning } = binsOf(values);
  const input = table ? undefined : requiredFlag("input", values.input);
  const { model, url, concurrency, resume, region, profile, prior } = values;
  return {
    policyId,
    policiesDir: values["policies-dir"],
    table,
    input,
    goal: goalOf(values),
    bins,
    binning,
    out: values.out,
    apply: values.apply,
    resume: resume ?? join(values.out, `${policyId}.scored.jsonl`),
    scoring: {
      model,
      "endpoint-name": values["endpoint-name"],
      url,
      concurrency,
      resume,
      region,
      profile,
      prior,
    },
  };
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

async function run(options: CalibrateOptions, io: CommandIo): Promise<Calibrated> {
  switch (options.mode) {
    case "check":
      return { mode: "check", checked: await calibrateCheck(options, io) };
    case "apply-proposal":
      return {
        mode: "apply-proposal",
        applied: await applyProposal(options.file, options.policiesDir, {
          labels: options.labels,
          acceptNoAutomation: options.acceptNoAutomation,
        }),
      };
    case "propose":
      return { mode: "propose", outcomes: await proposeFromTable(options) };
    case "plan":
      return { mode: "plan", planned: await planFromLabels(options, io) };
    case "rescore":
      return { mode: "rescore", run: await rescoreFromTable(options) };
    case "fit":
      return { mode: "fit", fitted: await fitFromLabels(options, io) };
  }
}

function print(result: Calibrated, options: CalibrateOptions): Printed {
  switch (result.mode) {
    case "check":
      return printChecked(result.checked);
    case "apply-proposal":
      return printApplied(result.applied);
    case "propose":
      return printProposals(result.outcomes, options as ProposeOptions);
    case "plan":
      return printPlan(result.planned);
    case "rescore":
      return printRescored(result.run);
    case "fit":
      return printFitted(result.fitted);
  }
}

/** `decide calibrate`: parse, run, print, each dispatching on the mode. */
export const calibrateCommand: OneShotCommand<CalibrateOptions, Calibrated> = { parse, run, print };

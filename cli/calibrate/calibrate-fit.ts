/**
 * `decide calibrate --policy ID` (from `--input` or a decisions table): fits the policy from its
 * labelled rows, writes the report and the JSON summary, and with `--apply` the proposed version
 * (never over a file, and only what `--apply-proposal` would accept).
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { PolicyAudit } from "../../shared/domain/audit/policy-audit.ts";
import {
  type CalibrationSummary,
  calibratePolicy,
  TooFewLabelsError,
} from "../../shared/domain/calibration/calibrate.ts";
import { type MassFloorProposal, proposeMassFloor } from "../../shared/domain/calibration/off-options.ts";
import { checkProposal } from "../../shared/domain/calibration/proposal-check.ts";
import type { ThresholdGoal } from "../../shared/domain/calibration/threshold.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import type { ReviewerAgreement } from "../../shared/domain/review/review.ts";
import { renderReport } from "../../shared/reports/calibration-report.ts";
import { recentAudit } from "../../shared/use-cases/audit-estimate.ts";
import { reviewedLabels } from "../../shared/use-cases/review/reviewed-labels.ts";
import { UsageError } from "../args.ts";
import { awsOptions, decisionStore } from "../aws.ts";
import type { CommandIo } from "../command.ts";
import { type CalibrationInput, readRows, scoreStatesAndPrior } from "./calibrate-input.ts";
import type { ScoringFlags } from "./calibrate-scoring.ts";

/** What a fit was asked. */
export interface FitOptions {
  readonly policyId: string;
  readonly policiesDir: string;
  /** The decisions table to read reviewed labels from; else `input`. */
  readonly table: string | undefined;
  readonly input: string | undefined;
  readonly goal: ThresholdGoal;
  readonly bins: number;
  readonly binning: "equal-width" | "equal-mass";
  readonly out: string;
  readonly apply: boolean;
  readonly resume: string;
  readonly scoring: ScoringFlags & { prior: boolean };
}

/** What happened to the proposed version. */
export type ProposedVersion =
  | { readonly kind: "refused"; readonly refusals: string[] }
  | { readonly kind: "not-written" | "exists" | "written"; readonly path: string };

/** The fit, where its report and summary are, and what happened to the proposed version. */
export interface Fitted {
  readonly policy: Policy;
  readonly summary: CalibrationSummary;
  readonly agreement: ReviewerAgreement | undefined;
  readonly offOptions: MassFloorProposal | undefined;
  readonly paths: { readonly report: string; readonly summary: string };
  readonly version: ProposedVersion;
}

/** The labelled rows: from the decisions table or the input file, states and the prior scored. */
async function gatherLabels(options: FitOptions, policy: Policy, now: Date): Promise<CalibrationInput> {
  const store = options.table ? decisionStore(options.table, awsOptions(options.scoring)) : undefined;
  const base: CalibrationInput = store
    ? { ...(await reviewedLabels(store, policy, undefined, now.toISOString())), states: [] }
    : { ...(await readRows(options.input!, policy)), agreement: undefined, masses: [] };
  if (base.states.length === 0 && !options.scoring.prior) return base;
  return scoreStatesAndPrior(options.scoring, policy, base, options.resume);
}

/** Calibrates one policy from labelled rows, writes the report and summary, and maybe the version. */
export async function fitFromLabels(options: FitOptions, io: CommandIo): Promise<Fitted> {
  const { policyId, table } = options;
  const registry = await PolicyRegistry.fromFolder(options.policiesDir);
  const policy = registry.current(policyId);
  if (!policy)
    throw new UsageError(`--policy: unknown policy "${policyId}" (known: ${registry.ids().join(", ")})`);
  // Labels up to now: a certificate names this window (or the file), so it can be read back.
  const now = new Date();
  const input = await gatherLabels(options, policy, now);
  const labelSource = table
    ? { kind: "table" as const, policyVersion: policy.version, since: null, until: now.toISOString() }
    : { kind: "file" as const };
  for (const p of input.problems) io.note(`line ${p.line}: skipped: ${p.reason}`);
  if (input.problems.length) io.note(`${input.problems.length} rows skipped, ${input.rows.length} used`);
  const { goal, bins, binning } = options;
  const summary = fitPolicy(policy, input, { goal, bins, binning, labelSource }, now);
  const offOptions = input.masses.length > 0 ? proposeMassFloor(input.masses) : undefined;
  // From the decisions table, the report also shows the policy's live error rate from audits.
  const live = table
    ? await recentAudit(
        { store: decisionStore(table, awsOptions(options.scoring)), policies: registry },
        policy.id,
        now,
      )
    : undefined;
  const paths = await writeOutputs(options.out, policy, summary, { ...input, offOptions, live });
  const version = await writeProposedVersion(
    options.apply,
    options.policiesDir,
    policy,
    summary.proposedPolicy,
  );
  return { policy, summary, agreement: input.agreement, offOptions, paths, version };
}

/** The fit; too few rows is a usage error (one line, no stack). */
function fitPolicy(
  policy: Policy,
  input: CalibrationInput,
  options: Omit<Parameters<typeof calibratePolicy>[2], "now" | "prior">,
  now: Date,
): CalibrationSummary {
  try {
    return calibratePolicy(policy, input.rows, {
      ...options,
      now,
      ...(input.floor !== undefined ? { thresholdFloor: input.floor } : {}),
      ...(input.missing ? { unlabelled: input.missing } : {}),
      ...(input.prior ? { prior: input.prior } : {}),
    });
  } catch (error) {
    if (error instanceof TooFewLabelsError)
      throw new UsageError(
        `${policy.id}: ${error.labels} labelled ${error.labels === 1 ? "row fits" : "rows fit"} the policy; calibration needs at least ${error.needed}`,
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
): Promise<ProposedVersion> {
  const path = join(policiesDir, `${proposed.id}.v${proposed.version}.json`);
  const refusals = checkProposal(current, proposed).refusals;
  if (refusals.length > 0) return { kind: "refused", refusals };
  if (!apply) return { kind: "not-written", path };
  if (existsSync(path)) return { kind: "exists", path };
  await writeFile(path, `${JSON.stringify(proposed, null, 2)}\n`);
  return { kind: "written", path };
}

/**
 * `decide calibrate --apply-proposal FILE`: the explicit step that turns a reviewed proposal into
 * a policy file (then deploy, or restart the local mode, to serve it). It takes only what
 * calibration owns: a proposal that differs from the current version in anything else (question,
 * options, routing, audit settings), or holds a calibration field outside its documented range,
 * is refused with the field named. A certificate it carries is checked, not believed: its counts
 * must give its claim, and where its labels are at hand (the decisions table, or the labelled
 * file) it is recomputed on them. What it writes it prints, field by field.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { certificateOnLabelsProblem } from "../shared/domain/calibration/certificate-recompute.ts";
import { checkProposal } from "../shared/domain/calibration/proposal-check.ts";
import { type Policy, PolicyError, parsePolicy } from "../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { verifyCertificate } from "../shared/use-cases/certificate-labels.ts";
import { UsageError } from "./args.ts";
import { awsOptions, decisionStore } from "./aws.ts";
import { readRows } from "./calibrate-input.ts";
import { changeLines } from "./calibrate-print.ts";
import type { Printed } from "./command.ts";
import { cannotRead } from "./input-file.ts";

/** Where a proposal's certificate may find its labels: the decisions table, or the labelled file. */
export interface LabelsAtHand {
  readonly table?: string | undefined;
  readonly input?: string | undefined;
  readonly aws?: { readonly region?: string | undefined; readonly profile?: string | undefined };
}

/** The file written, the versions it went from and to, and how its certificate was checked. */
export interface Applied {
  readonly target: string;
  readonly current: Policy;
  readonly proposed: Policy;
  /** One line on the certificate's check; absent when the proposal carries none. */
  readonly certificateCheck?: string;
}

async function readProposal(file: string): Promise<Policy> {
  const text = await readFile(file, "utf8").catch((error: unknown) => {
    throw cannotRead(`--apply-proposal ${file}`, error);
  });
  try {
    return parsePolicy(JSON.parse(text), file);
  } catch (error) {
    if (error instanceof PolicyError || error instanceof SyntaxError)
      throw new UsageError(`${file} is not a valid policy: ${error.message}`);
    throw error;
  }
}

/**
 * The certificate recomputed on its labels where they are at hand: a line saying so, or a
 * UsageError naming what does not match. Without labels at hand, its counts alone were checked.
 */
async function checkCertificateLabels(
  file: string,
  proposed: Policy,
  registry: PolicyRegistry,
  labels: LabelsAtHand,
): Promise<string> {
  const c = proposed.certificate!;
  const refuse = (reason: string) => new UsageError(`${file} cannot be applied: ${reason}`);
  if (labels.input !== undefined) {
    const read = await readRows(labels.input, registry.current(proposed.id)!);
    if (read.states.length > 0)
      throw new UsageError(
        `--input ${labels.input}: ${read.states.length} rows hold a state: give the scored rows (the --resume file of the calibration)`,
      );
    const problem = certificateOnLabelsProblem(proposed, read.rows, `in ${labels.input}`);
    if (problem) throw refuse(`certificate unverified: ${problem}`);
    return `certificate verified: recomputed on its ${read.rows.length} labels in ${labels.input}`;
  }
  const unchecked = "its counts give its claim; its labels were not checked";
  if (labels.table === undefined)
    return `certificate: ${unchecked} (give --from-table or --input to recompute it on them)`;
  if (c.labelSource?.kind !== "table")
    return `certificate: ${unchecked} (${c.labelSource ? "made from a labelled file: give it with --input" : "it does not say where its labels are"})`;
  const store = decisionStore(labels.table, awsOptions(labels.aws ?? {}));
  const verdict = await verifyCertificate({ store, policies: registry }, proposed);
  if (!verdict.verified) throw refuse(verdict.reason);
  return `certificate verified: recomputed on its ${verdict.labels} labels in ${labels.table}`;
}

/**
 * Writes a proposed policy into the policies folder as `<id>.v<N>.json`, after checking that it
 * is a valid policy, the next version of one the folder holds, changes only calibration fields
 * within their ranges, and carries a certificate that holds (recomputed on its labels when they
 * are at hand); never over an existing file.
 */
export async function applyProposal(
  file: string,
  policiesDir: string,
  labels: LabelsAtHand = {},
): Promise<Applied> {
  const registry = await PolicyRegistry.fromFolder(policiesDir);
  const proposed = await readProposal(file);
  const current = registry.current(proposed.id);
  if (!current) throw new UsageError(`${file}: policy "${proposed.id}" is not in ${policiesDir}`);
  if (proposed.version !== current.version + 1)
    throw new UsageError(
      `${file} proposes version ${proposed.version} of ${proposed.id}, but ${policiesDir} is at version ${current.version}: only version ${current.version + 1} applies`,
    );
  const refusals = checkProposal(current, proposed).refusals;
  if (refusals.length > 0) throw new UsageError(`${file} cannot be applied: ${refusals.join("; ")}`);
  const certificateCheck = proposed.certificate
    ? await checkCertificateLabels(file, proposed, registry, labels)
    : undefined;
  const target = join(policiesDir, `${proposed.id}.v${proposed.version}.json`);
  if (existsSync(target)) throw new UsageError(`${target} exists already; refusing to overwrite it`);
  await writeFile(target, `${JSON.stringify(proposed, null, 2)}\n`);
  return { target, current, proposed, ...(certificateCheck ? { certificateCheck } : {}) };
}

/** What was written and what it changed, field by field. */
export function printApplied({ target, current, proposed, certificateCheck }: Applied): Printed {
  return {
    lines: [
      `wrote ${target}: ${proposed.id} version ${current.version} -> ${proposed.version}:`,
      ...changeLines(current, proposed).map((line) => `  ${line}`),
      ...(certificateCheck ? [`  ${certificateCheck}`] : []),
      "Restart `npm start`, or deploy (npx cdk deploy), to decide new items with it.",
    ],
    exitCode: 0,
  };
}

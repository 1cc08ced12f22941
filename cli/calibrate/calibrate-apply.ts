/**
 * `decide calibrate --apply-proposal FILE`: the explicit step that turns a reviewed proposal into
 * a policy file (then deploy, or restart the local mode, to serve it). It takes only what
 * calibration owns: a proposal that differs from the current version in anything else (question,
 * options, routing, audit settings), or holds a calibration field outside its documented range,
 * is refused with the field named. A certificate it carries is checked, not believed: its counts
 * must give its claim, and where its labels are at hand (the decisions table, or the labelled
 * file) it is recomputed on them. A proposal that would send every item to people (no threshold
 * qualified) is refused unless `--accept-no-automation` is given, with the plan command that says
 * how many labels a certificate needs. What it writes it prints, field by field.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { certificateOnLabelsProblem } from "../../shared/domain/calibration/certificate/certificate-recompute.ts";
import {
  requiredCertificateProblem,
  verifiedText,
} from "../../shared/domain/calibration/certificate/registered-kind.ts";
import { checkProposal } from "../../shared/domain/calibration/proposal-check.ts";
import { type Policy, PolicyError, parsePolicyText } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { verifyCertificate } from "../../shared/use-cases/calibration/certificate-labels.ts";
import { UsageError } from "../args.ts";
import { awsOptions, decisionStore } from "../aws.ts";
import type { Printed } from "../command.ts";
import { cannotRead } from "../input-file.ts";
import { readRows } from "./calibrate-input.ts";
import { changeLines } from "./calibrate-print.ts";

/** Where a proposal's certificate may find its labels: the decisions table, or the labelled file. */
export interface LabelsAtHand {
  readonly table?: string | undefined;
  readonly input?: string | undefined;
  readonly aws?: { readonly region?: string | undefined; readonly profile?: string | undefined };
}

/** How `--apply-proposal` was asked to apply. */
export interface ApplyOptions {
  /** Where the certificate's labels are. @default none at hand */
  readonly labels?: LabelsAtHand;
  /** Apply a proposal that automates nothing while the current version automates. @default false */
  readonly acceptNoAutomation?: boolean;
}

/**
 * Why a version automates nothing, or undefined when it may automate: its threshold is 1, its
 * certificate found no threshold, or it requires a certificate and carries none, or one that is
 * not pre-registered.
 */
function automatesNothing(p: Policy): string | undefined {
  if (p.autoThreshold >= 1 || p.certificate?.threshold === null) return "no certificate";
  if (p.requireCertificate && !p.certificate) return "no certificate, and the policy requires one";
  return requiredCertificateProblem(p, p.certificate);
}

/**
 * The refusal of a proposal that would turn automation off, naming the plan command; undefined
 * when it automates, or when the current version already automates nothing.
 */
function noAutomationRefusal(file: string, current: Policy, proposed: Policy): UsageError | undefined {
  const reason = automatesNothing(proposed);
  if (!reason || automatesNothing(current)) return undefined;
  // The plan for the target the proposal was certified for, else the policy's error budget.
  const maxError = proposed.certificate?.maxError ?? current.maxAutoError ?? 0.02;
  const confidence = proposed.certificate?.confidence ?? 0.95;
  const plan = `npx decide calibrate --plan --policy ${proposed.id} --max-auto-error ${maxError} --confidence ${confidence}`;
  return new UsageError(
    `${file} cannot be applied: ${reason}: applying this sends every item to people (autoThreshold ${current.autoThreshold} -> ${proposed.autoThreshold}); plan the labels a certificate needs with  ${plan}, or give --accept-no-automation to apply it anyway`,
  );
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
    return parsePolicyText(text, file);
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
    return verifiedText(c, read.rows.length, labels.input);
  }
  const unchecked = "its counts give its claim; its labels were not checked";
  if (labels.table === undefined)
    return `certificate: ${unchecked} (give --from-table or --input to recompute it on them)`;
  if (c.labelSource?.kind !== "table" && c.labelSource?.kind !== "sample")
    return `certificate: ${unchecked} (${c.labelSource ? "made from a labelled file: give it with --input" : "it does not say where its labels are"})`;
  const store = decisionStore(labels.table, awsOptions(labels.aws ?? {}));
  const verdict = await verifyCertificate({ store, policies: registry }, proposed);
  if (!verdict.verified) throw refuse(verdict.reason);
  return verifiedText(c, verdict.labels, labels.table);
}

/**
 * Writes a proposed policy into the policies folder as `<id>.v<N>.json`, after checking that it
 * is a valid policy (no key repeated), the next version of one the folder holds, changes only
 * calibration fields within their ranges, at least one that the decisions use, automates
 * something where the current version does (or is accepted not to), and carries a certificate
 * that holds (recomputed on its labels when they are at hand); never over an existing file.
 */
export async function applyProposal(
  file: string,
  policiesDir: string,
  options: ApplyOptions = {},
): Promise<Applied> {
  const labels = options.labels ?? {};
  const registry = await PolicyRegistry.fromFolder(policiesDir);
  const proposed = await readProposal(file);
  const current = registry.current(proposed.id);
  if (!current) throw new UsageError(`${file}: policy "${proposed.id}" is not in ${policiesDir}`);
  if (proposed.version !== current.version + 1)
    throw new UsageError(
      `${file} proposes version ${proposed.version} of ${proposed.id}, but ${policiesDir} is at version ${current.version}: only version ${current.version + 1} applies`,
    );
  const { changes, refusals } = checkProposal(current, proposed);
  if (refusals.length > 0) throw new UsageError(`${file} cannot be applied: ${refusals.join("; ")}`);
  // A version that decides exactly as the current one would only make the record's version lie.
  if (changes.every((change) => change.field === "calibratedAt"))
    throw new UsageError(
      `${file} changes nothing the decisions use${changes.length ? " (only calibratedAt)" : ""}: ${proposed.id} stays at version ${current.version}, nothing written`,
    );
  const noAutomation = options.acceptNoAutomation ? undefined : noAutomationRefusal(file, current, proposed);
  if (noAutomation) throw noAutomation;
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

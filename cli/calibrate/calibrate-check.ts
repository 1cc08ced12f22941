/**
 * `decide calibrate --check`: compares recent decisions with a calibration's baseline and, when
 * they drifted, says so (exit code 3) and emits "Calibration Drift" to the event bus if one is
 * named. Rows of another policy, another version or other options than the baseline's are refused
 * with their line numbers: they say nothing about this calibration's drift.
 */

import { readFile } from "node:fs/promises";
import {
  checkDrift,
  type DriftBaseline,
  type RecentDecision,
} from "../../shared/domain/calibration/drift.ts";
import { publishedEvent } from "../../shared/domain/contracts/events.ts";
import { DetailType } from "../../shared/domain/events.ts";
import { readLines } from "../../shared/domain/input/lines.ts";
import { UsageError } from "../args.ts";
import { awsOptions, publisherTo } from "../aws.ts";
import type { CommandIo, Printed } from "../command.ts";
import { openInput } from "../input-file.ts";

/** Exit code when drift was found. */
export const DRIFT_EXIT_CODE = 3;

/** The part of a calibration summary the check reads. */
interface BaselineSummary {
  readonly policy: { readonly id: string; readonly version: number };
  readonly options: string[];
  readonly baseline: DriftBaseline;
}

/** Why a recent row is not a decision of the baseline's policy version, or undefined when it is. */
function mismatch(row: Record<string, unknown>, summary: BaselineSummary): string | undefined {
  const { id, version } = summary.policy;
  const policy = row.policyId ?? row.policy;
  if (policy !== undefined && policy !== id)
    return `belongs to policy "${String(policy)}", the baseline is ${id}@${version}`;
  if (row.policyVersion !== undefined && row.policyVersion !== version)
    return `is a decision of ${id}@${String(row.policyVersion)}, the baseline is ${id}@${version}`;
  const source = (row.distribution ?? row.probabilities) as object;
  if (Array.isArray(source))
    return source.length === summary.options.length
      ? undefined
      : `holds ${source.length} probabilities, the baseline's policy has ${summary.options.length} options`;
  const options = Object.keys(source).sort().join(", ");
  const expected = [...summary.options].sort().join(", ");
  if (options !== expected) return `its options (${options}) are not the baseline's (${expected})`;
  return undefined;
}

/** The recent decisions of the file that fit the baseline; the others reported and left out. */
async function readRecent(path: string, summary: BaselineSummary, io: CommandIo): Promise<RecentDecision[]> {
  const recent: RecentDecision[] = [];
  let refused = 0;
  for await (const { line: number, text: line, error } of readLines(
    await openInput(path, `--recent ${path}`),
  )) {
    if (error !== undefined) throw new UsageError(`${path} line ${number}: ${error}`);
    if (!line.trim()) continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new UsageError(`${path} line ${number}: not valid JSON`);
    }
    const source = (row.distribution ?? row.probabilities) as Record<string, number> | number[] | undefined;
    if (!source || typeof source !== "object" || (row.route !== "auto" && row.route !== "human")) {
      io.note(`line ${number}: skipped: needs a distribution (or probabilities) and route auto or human`);
      continue;
    }
    const wrong = mismatch(row, summary);
    if (wrong) {
      io.note(`line ${number}: refused: ${wrong}`);
      refused++;
      continue;
    }
    const probabilities = Array.isArray(source)
      ? source
      : summary.options.map((id) => Number(source[id] ?? 0));
    recent.push({
      probabilities,
      route: row.route,
      allowedTokenMass: (row.allowedTokenMass as number | null | undefined) ?? null,
    });
  }
  if (recent.length === 0 && refused > 0)
    throw new UsageError(
      `none of the ${refused} rows of ${path} is a decision of ${summary.policy.id}@${summary.policy.version}: nothing to compare with its baseline`,
    );
  // Nothing to compare is no finding: "no drift" over no decisions would be a false all-clear.
  if (recent.length === 0)
    throw new UsageError(
      `${path} holds no decision to check (each line needs a distribution or probabilities and a route auto or human): nothing to compare with the baseline`,
    );
  return recent;
}

/** What `decide calibrate --check` was asked. */
export interface CheckOptions {
  readonly baseline: string;
  readonly recent: string;
  readonly eventBus: string | undefined;
}

/** The checks, for which policy version, and the bus "Calibration Drift" went to (if it did). */
export interface Checked {
  readonly policy: BaselineSummary["policy"];
  readonly result: ReturnType<typeof checkDrift>;
  readonly publishedTo: string | undefined;
}

/** Runs the check; on drift, emits "Calibration Drift" when a bus is named. */
export async function calibrateCheck(options: CheckOptions, io: CommandIo): Promise<Checked> {
  const summary = JSON.parse(await readFile(options.baseline, "utf8")) as BaselineSummary;
  const recent = await readRecent(options.recent, summary, io);
  const result = checkDrift(summary.baseline, recent);
  const { policy } = summary;
  if (!result.drifted || !options.eventBus) return { policy, result, publishedTo: undefined };
  await publisherTo(options.eventBus, awsOptions({})).publish([
    publishedEvent(DetailType.drift, `drift|${policy.id}@${policy.version}|${new Date().toISOString()}`, {
      policyId: policy.id,
      policyVersion: policy.version,
      decisions: result.decisions,
      checks: result.checks,
    }),
  ]);
  return { policy, result, publishedTo: options.eventBus };
}

/** A line per check, the verdict, and where the event went; exit 3 on drift. */
export function printChecked({ policy, result, publishedTo }: Checked): Printed {
  const lines = result.checks.map(
    (c) =>
      `${c.drifted ? "DRIFT" : "ok   "} ${c.name}: baseline ${c.baseline.toFixed(3)}, recent ${c.recent.toFixed(3)} (bound ${c.bound})`,
  );
  lines.push(
    `${result.decisions} recent decisions of ${policy.id}@${policy.version}: ${result.drifted ? "drift found" : "no drift"}`,
  );
  if (publishedTo) lines.push(`published "Calibration Drift" to ${publishedTo}`);
  return { lines, exitCode: result.drifted ? DRIFT_EXIT_CODE : 0 };
}

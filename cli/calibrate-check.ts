/**
 * `decide calibrate --check`: compares recent decisions with a calibration's baseline and, when
 * they drifted, says so (exit code 3) and emits "Calibration Drift" to the event bus if one is named.
 */
import { readFile } from "node:fs/promises";
import { checkDrift, type DriftBaseline, type RecentDecision } from "../shared/domain/calibration/drift.ts";
import { DetailType, pipelineEvent } from "../shared/domain/events.ts";
import { readLines } from "../shared/domain/input/lines.ts";
import { UsageError } from "./args.ts";
import { awsOptions, publisherTo } from "./aws.ts";
import { openInput } from "./input-file.ts";

/** Exit code when drift was found. */
export const DRIFT_EXIT_CODE = 3;

/** Runs the check; returns the exit code. */
export async function calibrateCheck(options: {
  baseline: string;
  recent: string;
  eventBus: string | undefined;
}): Promise<number> {
  const summary = JSON.parse(await readFile(options.baseline, "utf8")) as {
    policy: { id: string; version: number };
    options: string[];
    baseline: DriftBaseline;
  };
  const recent: RecentDecision[] = [];
  for await (const { line: number, text: line, error } of readLines(
    await openInput(options.recent, `--recent ${options.recent}`),
  )) {
    if (error !== undefined) throw new UsageError(`${options.recent} line ${number}: ${error}`);
    if (!line.trim()) continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new UsageError(`${options.recent} line ${number}: not valid JSON`);
    }
    const source = (row.distribution ?? row.probabilities) as Record<string, number> | number[] | undefined;
    if (!source || (row.route !== "auto" && row.route !== "human")) {
      console.error(
        `line ${number}: skipped: needs a distribution (or probabilities) and route auto or human`,
      );
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
  const result = checkDrift(summary.baseline, recent);
  for (const c of result.checks) {
    console.log(
      `${c.drifted ? "DRIFT" : "ok   "} ${c.name}: baseline ${c.baseline.toFixed(3)}, recent ${c.recent.toFixed(3)} (bound ${c.bound})`,
    );
  }
  console.log(
    `${result.decisions} recent decisions of ${summary.policy.id}@${summary.policy.version}: ${result.drifted ? "drift found" : "no drift"}`,
  );
  if (result.drifted && options.eventBus) {
    await publisherTo(options.eventBus, awsOptions({})).publish([
      pipelineEvent(
        DetailType.drift,
        `drift|${summary.policy.id}@${summary.policy.version}|${new Date().toISOString()}`,
        {
          policyId: summary.policy.id,
          policyVersion: summary.policy.version,
          decisions: result.decisions,
          checks: result.checks,
        },
      ),
    ]);
    console.log(`published "Calibration Drift" to ${options.eventBus}`);
  }
  return result.drifted ? DRIFT_EXIT_CODE : 0;
}

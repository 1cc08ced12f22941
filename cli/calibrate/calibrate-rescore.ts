/**
 * `decide calibrate --rescore`: asks a cascade's second model, through the endpoint the flags
 * name, about the labelled and drawn decisions of the current version that lack its answer, and
 * records each on its decision as a re-score (`shared/use-cases/rescore-later-tiers.ts`), so that
 * the cascade's certificate can judge every pair of thresholds instead of leaving them out.
 */
import { systemClock } from "../../shared/domain/clock.ts";
import { counted } from "../../shared/domain/plural.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { type Rescored, rescoreLaterTiers } from "../../shared/use-cases/rescore-later-tiers.ts";
import { UsageError } from "../args.ts";
import { awsOptions, decisionStore } from "../aws.ts";
import type { Printed } from "../command.ts";
import { openScoringSource, type ScoringFlags } from "./calibrate-scoring.ts";

/** What `--rescore` was asked. */
export interface RescoreOptions {
  readonly policyId: string;
  readonly policiesDir: string;
  readonly table: string;
  readonly scoring: ScoringFlags;
}

/** What it did, and where it asked. */
export interface RescoreRun {
  readonly policy: string;
  readonly source: string;
  readonly rescored: Rescored;
}

/** Opens the policy, the table and the source, and re-scores. */
export async function rescoreFromTable(options: RescoreOptions): Promise<RescoreRun> {
  const registry = await PolicyRegistry.fromFolder(options.policiesDir);
  const policy = registry.current(options.policyId);
  if (!policy)
    throw new UsageError(
      `--policy: unknown policy "${options.policyId}" (known: ${registry.ids().join(", ")})`,
    );
  if (!policy.cascade?.length)
    throw new UsageError(
      `--rescore: ${policy.id}@${policy.version} has no cascade, so no later model to ask`,
    );
  const source = await openScoringSource(options.scoring);
  if (!source)
    throw new UsageError(
      `--rescore needs the endpoint that serves ${policy.cascade[0]!.model}: --url URL (the local endpoint), --endpoint-name NAME, or --model FILE (that model's file)`,
    );
  try {
    const store = decisionStore(options.table, awsOptions(options.scoring));
    const rescored = await rescoreLaterTiers(
      { store, endpoint: source.endpoint, now: systemClock },
      policy,
      source.concurrency,
    );
    return { policy: `${policy.id}@${policy.version}`, source: source.name, rescored };
  } finally {
    await source.close();
  }
}

/** The lines: what was asked, what was already there, and what failed (exit 1 when any did). */
export function printRescored(run: RescoreRun): Printed {
  const r = run.rescored;
  const lines = [
    `${run.policy}: re-scored ${counted(r.rescored, "item")} with ${r.model} on ${run.source} (${r.considered} labelled or drawn, ${r.answered} had its answer already); each kept on its decision as a re-score, never acted on`,
  ];
  for (const f of r.failed.slice(0, 10)) lines.push(`  not re-scored: ${f.itemId}: ${f.reason}`);
  if (r.failed.length > 10) lines.push(`  ... and ${r.failed.length - 10} more not re-scored`);
  if (r.failed.length === 0) lines.push("  now propose again: the cascade's certificate reads these answers");
  return { lines, exitCode: r.failed.length ? 1 : 0 };
}

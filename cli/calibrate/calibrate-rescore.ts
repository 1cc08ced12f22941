/**
 * `decide calibrate --rescore`: asks a cascade's second model, through the endpoint the flags
 * name, about the labelled and drawn decisions of the current version that lack its answer, and
 * records each on its decision as a re-score (`shared/use-cases/calibration/rescore-later-tiers.ts`), so that
 * the cascade's certificate can judge every pair of thresholds instead of leaving them out. The
 * same step runs on a certification sample straight after `--plan --request N` draws it, when
 * that command names a source; without one, the plan says how many drawn items lack the answer,
 * what it is for (not the registered plan's certificate, which judges each drawn item by the
 * model that acted) and the command that gets it.
 */
import { systemClock } from "../../shared/domain/clock.ts";
import type { DecisionStore } from "../../shared/domain/decision-store.ts";
import { counted } from "../../shared/domain/plural.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import {
  laterTierGap,
  type Rescored,
  rescoreLaterTiers,
} from "../../shared/use-cases/calibration/rescore-later-tiers.ts";
import { UsageError } from "../args.ts";
import { awsOptions, decisionStore } from "../aws.ts";
import type { Printed } from "../command.ts";
import { openScoringSource, type ScoringFlags } from "./calibrate-scoring.ts";
import type { ScoringSource } from "./calibrate-source.ts";

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
  lines.push(...failedLines(r));
  if (r.failed.length === 0) lines.push("  now propose again: the cascade's certificate reads these answers");
  return { lines, exitCode: r.failed.length ? 1 : 0 };
}

/** The items not re-scored, with why: the first ten, then how many more. */
function failedLines(r: Rescored): string[] {
  const lines = r.failed.slice(0, 10).map((f) => `  not re-scored: ${f.itemId}: ${f.reason}`);
  if (r.failed.length > 10) lines.push(`  ... and ${r.failed.length - 10} more not re-scored`);
  return lines;
}

/** A cascade's certification sample just drawn: its items lacking the later model's answer, and their re-score. */
export interface DrawnRescore {
  readonly policy: Policy;
  /** The decisions table and policies folder named in the command that gets the answers. */
  readonly table: string;
  readonly policiesDir: string;
  /** The later model (the cascade's second). */
  readonly model: string;
  /** Drawn items whose deciding model left the later one unasked, before any re-score. */
  readonly lacking: number;
  /** The re-score of them, when the command named a source. */
  readonly run?: RescoreRun;
}

/** The policies folder `decide calibrate` reads when none is named. */
const DEFAULT_POLICIES_DIR = "events/policies";

/**
 * Opens the source `--plan --request N` names for re-scoring the drawn items (`--url`,
 * `--endpoint-name` or `--model`), before anything is drawn; undefined when it names none, and a
 * usage error for a policy without a cascade (no later model to ask).
 */
export async function openDrawnRescore(
  policy: Policy,
  scoring: ScoringFlags | undefined,
): Promise<ScoringSource | undefined> {
  const named = scoring && (scoring.model ?? scoring["endpoint-name"] ?? scoring.url) !== undefined;
  if (!named) return undefined;
  if (!policy.cascade?.length)
    throw new UsageError(
      `--url, --endpoint-name and --model re-score a cascade's drawn items: ${policy.id}@${policy.version} has no cascade, so no later model to ask`,
    );
  return openScoringSource(scoring);
}

/**
 * Straight after `sample` is drawn for a cascade: how many of its items lack the later model's
 * answer (those the first model decided), re-scored through `source` when one is given (one line
 * of progress through `note`). Undefined for a policy without a cascade.
 */
export async function rescoreDrawn(
  store: DecisionStore,
  target: Pick<DrawnRescore, "policy" | "table" | "policiesDir"> & { readonly sample: string },
  source: ScoringSource | undefined,
  note: (line: string) => void,
): Promise<DrawnRescore | undefined> {
  const { policy, table, policiesDir, sample } = target;
  if (!policy.cascade?.length) return undefined;
  const gap = await laterTierGap(store, policy, sample);
  const found = { policy, table, policiesDir, model: gap.model, lacking: gap.lacking.length };
  if (!source || gap.lacking.length === 0) return found;
  note(
    `re-scoring ${counted(gap.lacking.length, "drawn item")} of ${sample} with ${gap.model} on ${source.name} ...`,
  );
  const rescored = await rescoreLaterTiers(
    { store, endpoint: source.endpoint, now: systemClock },
    policy,
    source.concurrency,
    sample,
  );
  return { ...found, run: { policy: `${policy.id}@${policy.version}`, source: source.name, rescored } };
}

/**
 * What the re-score of the drawn items did, or, without one, exactly one line: how many drawn
 * items lack which model's answer and the full command that gets it. Nothing when none lacks it.
 */
export function drawnRescoreLines(d: DrawnRescore): Printed {
  if (d.run) {
    const r = d.run.rescored;
    const lines = [
      `  re-scored ${counted(r.rescored, "drawn item")} with ${r.model} on ${d.run.source} (${r.considered} drawn, ${r.answered} had its answer already); each kept on its decision as a re-score, never acted on`,
      ...failedLines(r),
    ];
    return { lines, exitCode: r.failed.length ? 1 : 0 };
  }
  if (d.lacking === 0) return { lines: [], exitCode: 0 };
  const { policy } = d;
  const dir = d.policiesDir === DEFAULT_POLICIES_DIR ? "" : ` --policies-dir ${d.policiesDir}`;
  return {
    lines: [
      `  ${counted(d.lacking, "drawn item")} ${d.lacking === 1 ? "lacks" : "lack"} ${d.model}'s answer (the first model decided ${d.lacking === 1 ? "it" : "them"}; the registered plan does not need it, as it judges each drawn item by the model that acted; it serves a learn-then-test certificate on the labels held and the plan's reading of later labels): get it with  npx decide calibrate --rescore --policy ${policy.id}${dir} --from-table ${d.table} --url http://localhost:8080 (the local endpoint; deployed: --endpoint-name NAME instead of --url)`,
    ],
    exitCode: 0,
  };
}

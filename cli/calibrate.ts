/**
 * `decide calibrate`: fits a policy's temperature and auto threshold from labelled decisions,
 * writes a readable HTML report and a JSON summary, and proposes the next policy version (written
 * only with --apply, never over an existing file).
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { calibratePolicy } from "../shared/domain/calibration/calibrate.ts";
import { type MassRow, proposeMassFloor } from "../shared/domain/calibration/off-options.ts";
import { CONTENT_FREE_STATES, estimatePrior } from "../shared/domain/calibration/prior.ts";
import { agreementText, priorText, renderReport } from "../shared/domain/calibration/report.ts";
import type { LabelledLogits } from "../shared/domain/calibration/temperature.ts";
import type { Policy } from "../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { recentAudit } from "../shared/use-cases/audit-estimate.ts";
import {
  FULL_TRUST_LABELS,
  MIN_FIT_LABELS,
  reviewedLabels,
} from "../shared/use-cases/propose-calibration.ts";
import { integerFlag, requiredFlag, UsageError } from "./args.ts";
import { awsOptions, decisionStore } from "./aws.ts";
import { calibrateCheck } from "./calibrate-check.ts";
import { goalOf } from "./calibrate-goal.ts";
import { applyProposal, proposeFromTable } from "./calibrate-propose.ts";
import { openScoringSource, SCORING_FLAGS, type StateRow, scoreStateRows } from "./calibrate-scoring.ts";

export const calibrateUsage = `decide calibrate --input labelled.jsonl --policy ID [--target-accuracy 0.97 | --cost-wrong 20 --cost-review 1]
                 [--model file.gguf | --endpoint-name NAME | --url URL] [--concurrency 4] [--resume FILE]
                 [--prior] [--table DECISIONS_TABLE] [--policies-dir events/policies] [--out calibration-out]
                 [--bins 10] [--binning equal-width|equal-mass] [--apply]

Each input line: {"label": "<option id>", "logits": [...]} (stored distribution, in the policy's option order),
or {"label", "probabilities": {"<id>": p}}, or {"label", "state": ...}: states are scored as the pipeline
would score them, in process (--model), on the deployed SageMaker endpoint (--endpoint-name, with --region
and --profile), or on any System One server (--url http://host:8080). Remote scoring sends --concurrency
requests at a time with retries, shows progress, and keeps scored rows in --resume (default
<out>/<policy>.scored.jsonl) so that a stopped run resumes where it stopped.
Rows that do not fit the policy are reported with their line numbers, not dropped silently.
--prior scores content-free items ("N/A", "[MASK]", "-") on the same source, divides that prior out of
every decision and proposes it as the policy's "prior"; the report shows what it changes.
Writes <out>/<policy>.report.html and <out>/<policy>.summary.json; --apply writes the proposed
policy version into the policies folder.
Example: npx decide calibrate --input events/calibration/ticket-routing.labelled.jsonl --policy ticket-routing

decide calibrate --from-table DECISIONS_TABLE --propose [--policy ID] [--min-labels 200] [--out calibration-out] [--event-bus NAME]
Gathers the labels reviewers gave since each policy version was calibrated; with at least --min-labels
(10 or more; under 200 a fifth of items stays with people), writes a proposed next version with its
report under <out>/<policy>/ and emits "Calibration Proposed" when a bus is named. Changes nothing.

decide calibrate --apply-proposal <out>/<policy>/v2-from-N-labels/policy.json [--policies-dir events/policies]
The explicit step: checks the proposal and writes it as the policy's next version file.

decide calibrate --check --baseline <out>/<policy>.summary.json --recent recent-decisions.jsonl [--event-bus NAME]
Compares recent decision records (distribution, route, allowedTokenMass) with the calibration
baseline; exits 3 and emits "Calibration Drift" (when a bus is named) if they drifted.`;

interface Row {
  readonly line: number;
  readonly value: Record<string, unknown>;
}

/** Reads labelled rows into logits; rows that do not fit are returned as problems. */
async function readRows(
  path: string,
  policy: Policy,
): Promise<{
  rows: LabelledLogits[];
  problems: { line: number; reason: string }[];
  states: StateRow[];
}> {
  const text = await readFile(path, "utf8").catch((error: unknown) => {
    throw new UsageError(`cannot read --input ${path}: ${(error as Error).message}`);
  });
  const ids = policy.options.map((o) => o.id);
  const problems: { line: number; reason: string }[] = [];
  const parsed: Row[] = [];
  text.split("\n").forEach((raw, i) => {
    if (!raw.trim()) return;
    try {
      parsed.push({ line: i + 1, value: JSON.parse(raw) as Record<string, unknown> });
    } catch (error) {
      problems.push({ line: i + 1, reason: `not valid JSON (${(error as Error).message})` });
    }
  });
  const rows: LabelledLogits[] = [];
  const states: StateRow[] = [];
  for (const row of parsed) {
    const v = row.value;
    if (v.policy !== undefined && v.policy !== policy.id) {
      problems.push({ line: row.line, reason: `belongs to policy "${String(v.policy)}"` });
      continue;
    }
    const label = ids.indexOf(String(v.label));
    if (label < 0) {
      problems.push({
        line: row.line,
        reason: `label "${String(v.label)}" is not an option of ${policy.id} (${ids.join(", ")})`,
      });
      continue;
    }
    const group = typeof v.id === "string" ? v.id : `line-${row.line}`;
    if (Array.isArray(v.logits)) {
      if (
        v.logits.length !== ids.length ||
        !v.logits.every((x) => typeof x === "number" && Number.isFinite(x))
      ) {
        problems.push({
          line: row.line,
          reason: `logits must be ${ids.length} finite numbers in option order`,
        });
        continue;
      }
      rows.push({ logits: v.logits as number[], label, group });
    } else if (v.probabilities && typeof v.probabilities === "object") {
      const p = ids.map((id) => Number((v.probabilities as Record<string, unknown>)[id]));
      if (p.some((x) => !(x > 0))) {
        problems.push({ line: row.line, reason: "probabilities must give every option a positive value" });
        continue;
      }
      rows.push({ logits: p.map(Math.log), label, group });
    } else if (v.state !== undefined) {
      states.push({ line: row.line, state: v.state, label, group });
    } else {
      problems.push({ line: row.line, reason: "needs logits, probabilities or a state" });
    }
  }
  return { rows, problems, states };
}

/** Runs the command; returns the exit code. */
export async function calibrateCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...SCORING_FLAGS,
      input: { type: "string" },
      policy: { type: "string" },
      "policies-dir": { type: "string", default: "events/policies" },
      out: { type: "string", default: "calibration-out" },
      "target-accuracy": { type: "string" },
      "cost-wrong": { type: "string" },
      "cost-review": { type: "string" },
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
    },
    strict: true,
  });
  if (values.check) {
    return calibrateCheck({
      baseline: requiredFlag("baseline", values.baseline),
      recent: requiredFlag("recent", values.recent),
      eventBus: values["event-bus"] ?? process.env.EVENT_BUS_NAME,
    });
  }
  const policiesDir = values["policies-dir"]!;
  const registry = await PolicyRegistry.fromFolder(policiesDir);
  const table = values["from-table"] ?? values.table;
  if (values["apply-proposal"]) return applyProposal(values["apply-proposal"], registry, policiesDir);
  if (values.propose) {
    if (!table)
      throw new UsageError("--propose reads the reviewers' labels: give --from-table DECISIONS_TABLE");
    return proposeFromTable({
      table,
      registry,
      policyId: values.policy,
      out: values.out!,
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
  const policyId = requiredFlag("policy", values.policy);
  const policy = registry.current(policyId);
  if (!policy)
    throw new UsageError(`--policy: unknown policy "${policyId}" (known: ${registry.ids().join(", ")})`);
  const binning = values.binning;
  if (binning !== "equal-width" && binning !== "equal-mass")
    throw new UsageError(`--binning must be equal-width or equal-mass`);
  const bins = Number(values.bins);
  if (!Number.isInteger(bins) || bins < 2 || bins > 50)
    throw new UsageError("--bins must be an integer from 2 to 50");

  const input = table
    ? {
        ...(await reviewedLabels(decisionStore(table, awsOptions(values)), policy)),
        states: [] as StateRow[],
      }
    : {
        ...(await readRows(requiredFlag("input", values.input), policy)),
        agreement: undefined,
        masses: [] as MassRow[],
      };
  const { agreement, masses } = input;
  const rows = [...input.rows];
  const problems = [...input.problems];
  let prior: number[] | undefined;
  if (input.states.length > 0 || values.prior) {
    const source = await openScoringSource(values);
    if (!source) {
      const why = values.prior
        ? "--prior scores content-free items"
        : `${input.states.length} rows hold a state`;
      throw new UsageError(`${why}: give --model FILE, --endpoint-name NAME or --url URL to score them`);
    }
    try {
      const resume = values.resume ?? join(values.out!, `${policy.id}.scored.jsonl`);
      const scored = await scoreStateRows(source, policy, input.states, resume);
      rows.push(...scored.rows);
      problems.push(...scored.problems);
      if (values.prior) {
        const free = CONTENT_FREE_STATES.map((state, i) => ({
          line: -(i + 1),
          state,
          label: 0,
          group: `free-${i}`,
        }));
        prior = estimatePrior(
          (await scoreStateRows(source, policy, free, undefined)).rows.map((r) => r.logits),
        );
        console.log(
          `${policy.id}: prior on content-free items (${CONTENT_FREE_STATES.map((s) => JSON.stringify(s)).join(", ")}): ${policy.options.map((o, k) => `${o.id} ${(prior![k]! * 100).toFixed(1)}%`).join(", ")}`,
        );
      }
    } finally {
      await source.close();
    }
  }
  for (const p of problems) console.error(`line ${p.line}: skipped: ${p.reason}`);
  if (problems.length) console.error(`${problems.length} rows skipped, ${rows.length} used`);
  const summary = calibratePolicy(policy, rows, {
    goal: goalOf(values),
    bins,
    binning,
    ...(prior ? { prior } : {}),
  });

  await mkdir(values.out!, { recursive: true });
  const reportPath = join(values.out!, `${policy.id}.report.html`);
  const summaryPath = join(values.out!, `${policy.id}.summary.json`);
  const offOptions = masses.length > 0 ? proposeMassFloor(masses) : undefined;
  // From the decisions table, the report also shows the policy's live error rate from audits.
  const store = table ? decisionStore(table, awsOptions(values)) : undefined;
  const live = store ? await recentAudit({ store, policies: registry }, policy.id, new Date()) : undefined;
  await writeFile(reportPath, renderReport(summary, agreement, offOptions, live));
  await writeFile(
    summaryPath,
    `${JSON.stringify({ ...summary, ...(agreement ? { reviewerAgreement: agreement } : {}), ...(offOptions ? { offOptions } : {}), skipped: problems }, null, 2)}\n`,
  );

  const proposed = summary.proposedPolicy;
  console.log(
    `${policy.id}: ${summary.labels} labels; ECE ${summary.raw.ece.toFixed(3)} raw -> ${summary.calibrated.ece.toFixed(3)} calibrated (out of fold)`,
  );
  console.log(`  temperature ${policy.temperature} -> ${proposed.temperature}`);
  console.log(
    `  autoThreshold ${policy.autoThreshold} -> ${proposed.autoThreshold} (${(summary.threshold.coverage * 100).toFixed(1)}% automated)`,
  );
  for (const note of summary.threshold.notes) console.log(`  note: ${note}`);
  const vector = summary.vectorScaling;
  console.log(
    `  vector scaling: out-of-fold NLL ${vector.outOfFoldNll.toFixed(4)} vs ${vector.temperatureOutOfFoldNll.toFixed(4)} (temperature alone): ${vector.chosen ? `proposed, offsets ${vector.bias.map((b) => b.toFixed(2)).join(", ")}, chosen option changes on ${(vector.changedChoices * 100).toFixed(1)}% of items` : "not proposed"}`,
  );
  if (summary.priorCorrection) console.log(`  ${priorText(summary.priorCorrection)}`);
  if (agreement) console.log(`  ${agreementText(agreement)}`);
  if (offOptions) console.log(`  off-options guard: ${offOptions.note}`);
  console.log(`report: ${reportPath}\nsummary: ${summaryPath}`);
  const policyPath = join(policiesDir, `${policy.id}.v${proposed.version}.json`);
  if (!values.apply) {
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

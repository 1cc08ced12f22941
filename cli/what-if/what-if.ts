/**
 * `decide what-if`: before a policy version or model ships, re-answers a stratified sample of
 * recent decisions under the candidate and prints what would change (flips by option pair,
 * share automated, escalations per day, wrong automatic actions on the labelled part with an
 * exact bound, seconds and cost per 1,000), with an HTML report of the flips beside the
 * calibration report. Nothing is changed.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { REALTIME_INSTANCES } from "../../infra/capacity/prices.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { type Policy, PolicyError, parsePolicyText } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { WHAT_IF } from "../../shared/domain/topology.ts";
import { renderWhatIf } from "../../shared/reports/what-if-report.ts";
import { windowStart } from "../../shared/use-cases/audit-estimate.ts";
import {
  WhatIfError,
  WhatIfNeedsScoringError,
  type WhatIfResult,
  type WhatIfSource,
  whatIf,
} from "../../shared/use-cases/what-if/what-if.ts";
import { CommandError, integerFlag, requiredFlag, settingFrom, sinceFlag, UsageError } from "../args.ts";
import { AWS_FLAGS, awsOptions, decisionStore } from "../aws.ts";
import { openScoringSource, type ScoringFlags } from "../calibrate/calibrate-scoring.ts";
import type { ScoringSource } from "../calibrate/calibrate-source.ts";
import type { CommandEnv, CommandIo, OneShotCommand } from "../command.ts";
import { cannotRead } from "../input-file.ts";
import { costLines, whatIfLines } from "./what-if-text.ts";

const DEFAULT_INSTANCE = REALTIME_INSTANCES.find((i) => i.name === "ml.c6i.xlarge")!;

export const whatIfUsage = `decide what-if --candidate policy.json [--from-table T]
               [--model file.gguf | --endpoint-name NAME | --url URL | --from-shadow]
               [--sample ${WHAT_IF.sample}] [--since YYYY-MM-DD] [--concurrency 4] [--out DIR]
               [--dollars-per-hour ${DEFAULT_INSTANCE.dollarsPerHour}] [--policies-dir events/policies] [--region R] [--profile P]

Re-answers a stratified sample (by live route and option) of the candidate policy's decisions made since
--since (default ${WHAT_IF.windowDays} days ago) under the candidate, and prints what would change: decisions
that flip (by option pair), the share automated, escalations per day, wrong automatic actions on the
labelled part with an exact binomial upper bound, and seconds and cost per 1,000 decisions.
The candidate's answers come from --model (in process), --endpoint-name (SageMaker) or --url (any System One
server): re-scored, for any change of model or prompt; with none of these, from the stored logits (when the
candidate leaves the prompt unchanged: calibration and routing changes); with --from-shadow, from the shadow
records the decide path wrote for this candidate version. Cost is the endpoint's busy time priced at
--dollars-per-hour (default ${DEFAULT_INSTANCE.name} on demand, infra/capacity/prices.ts).
Writes <policy>.what-if.html (every item that would change) and <policy>.what-if.json beside the candidate
file, or into --out.
--from-table defaults to DECISIONS_TABLE (npm start exports it).
Example: npx decide what-if --candidate content-moderation.v2.json --model demo.gguf --from-table "$DECISIONS_TABLE"`;

/** Reads and validates the candidate policy file. */
async function readCandidate(path: string): Promise<Policy> {
  const text = await readFile(path, "utf8").catch((error: unknown) => {
    throw cannotRead(`--candidate ${path}`, error);
  });
  try {
    return parsePolicyText(text, path);
  } catch (error) {
    if (error instanceof PolicyError || error instanceof SyntaxError)
      throw new UsageError(`--candidate ${path} is not a valid policy: ${error.message}`);
    throw error;
  }
}

/** A progress line on `stream`: redrawn on a terminal, every 50 items otherwise. */
function progress(stream: NodeJS.WriteStream) {
  return (done: number, total: number): void => {
    const line = `answered ${done}/${total}`;
    if (stream.isTTY) stream.write(`\r${line}${done === total ? "\n" : ""}`);
    else if (done % 50 === 0 || done === total) stream.write(`${line}\n`);
  };
}

/** Writes the HTML report and the JSON summary into `out`; returns their paths. */
async function writeReports(
  out: string,
  result: WhatIfResult,
  run: { candidate: Policy; since: string; where: string; cost: string[] },
): Promise<{ report: string; summary: string }> {
  await mkdir(out, { recursive: true });
  const report = join(out, `${run.candidate.id}.what-if.html`);
  const summary = join(out, `${run.candidate.id}.what-if.json`);
  await writeFile(
    report,
    renderWhatIf({
      policyId: run.candidate.id,
      liveVersion: result.live.version,
      candidateVersion: run.candidate.version,
      since: run.since,
      source: run.where,
      summary: result.summary,
      rows: result.rows,
      cost: run.cost,
    }),
  );
  const json = { ...result.summary, cost: result.cost, refused: result.refused };
  await writeFile(summary, `${JSON.stringify(json, null, 2)}\n`);
  return { report, summary };
}

/** The candidate's answers: the scoring source the flags name, else the shadow or stored logits. */
async function sourceOf(
  values: ScoringFlags & { "from-shadow"?: boolean | undefined },
): Promise<{ scoring: ScoringSource | undefined; source: WhatIfSource }> {
  const scoring = await openScoringSource(values);
  if (scoring && values["from-shadow"]) {
    await scoring.close();
    throw new UsageError(
      "--from-shadow reads the stored shadow answers: give no --model, --endpoint-name or --url",
    );
  }
  const source: WhatIfSource = scoring
    ? { kind: "rescore", endpoint: scoring.endpoint, concurrency: scoring.concurrency }
    : { kind: values["from-shadow"] ? "shadow" : "stored-logits" };
  return { scoring, source };
}

/** What `decide what-if` was asked. */
interface WhatIfOptions {
  readonly candidatePath: string;
  readonly table: string;
  readonly sample: number;
  readonly dollarsPerHour: number;
  readonly since: string;
  readonly scoring: ScoringFlags & { "from-shadow"?: boolean | undefined };
  /** Folder of the reports. @default the candidate file's folder */
  readonly out: string;
  readonly policiesDir: string;
  readonly aws: { readonly region?: string | undefined; readonly profile?: string | undefined };
}

/** The comparison, how it was made and where its reports were written. */
interface WhatIfRun {
  readonly result: WhatIfResult;
  readonly candidate: Policy;
  readonly where: string;
  readonly report: string;
  readonly summary: string;
}

function parse(argv: string[], env: CommandEnv): WhatIfOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...AWS_FLAGS,
      candidate: { type: "string" },
      "from-table": { type: "string" },
      model: { type: "string" },
      "endpoint-name": { type: "string" },
      url: { type: "string" },
      concurrency: { type: "string" },
      "from-shadow": { type: "boolean", default: false },
      sample: { type: "string" },
      since: { type: "string" },
      out: { type: "string" },
      "dollars-per-hour": { type: "string" },
      "policies-dir": { type: "string", default: "events/policies" },
    },
    strict: true,
  });
  const candidatePath = requiredFlag("candidate", values.candidate);
  const table = settingFrom("from-table", values["from-table"], FUNCTION_ENV.DECISIONS_TABLE, env);
  const sample = integerFlag("sample", values.sample, WHAT_IF.sample, 1, 100_000);
  const dollarsPerHour = Number(values["dollars-per-hour"] ?? DEFAULT_INSTANCE.dollarsPerHour);
  if (!(dollarsPerHour >= 0 && Number.isFinite(dollarsPerHour)))
    throw new UsageError(
      `--dollars-per-hour must be a number of at least 0, got "${values["dollars-per-hour"]}"`,
    );
  const since = sinceFlag(values.since, windowStart(new Date(), WHAT_IF.windowDays));
  const { model, url, concurrency, region, profile } = values;
  const scoring = { model, "endpoint-name": values["endpoint-name"], url, concurrency, region, profile };
  return {
    candidatePath,
    table,
    sample,
    dollarsPerHour,
    since,
    // Beside the candidate: a proposal's folder is its own, so what-ifs of two proposals never
    // overwrite each other's reports.
    out: values.out ?? dirname(candidatePath),
    scoring: { ...scoring, "from-shadow": values["from-shadow"] },
    policiesDir: values["policies-dir"]!,
    aws: { region, profile },
  };
}

/** Re-answers the sample under the candidate and writes the reports. */
async function run(options: WhatIfOptions, io: CommandIo): Promise<WhatIfRun> {
  const { since, sample } = options;
  const candidate = await readCandidate(options.candidatePath);
  const { scoring, source } = await sourceOf(options.scoring);
  let result: WhatIfResult;
  try {
    const policies = await PolicyRegistry.fromFolder(options.policiesDir);
    result = await whatIf(
      { store: decisionStore(options.table, awsOptions(options.aws)), policies },
      { candidate, source, since, sample, onAnswer: progress(io.progress) },
    );
  } catch (error) {
    if (error instanceof WhatIfNeedsScoringError) throw new UsageError(error.message, { cause: error });
    if (error instanceof WhatIfError) throw new CommandError(error.message, { cause: error });
    throw error;
  } finally {
    await scoring?.close();
  }
  const where = scoring
    ? `re-scored on ${scoring.name} (${scoring.concurrency} at a time)`
    : source.kind === "shadow"
      ? "the stored shadow answers, re-calibrated and re-routed under the candidate file"
      : "the stored raw logits (the prompt is unchanged), re-calibrated and re-routed";
  const cost = costLines(result, options.dollarsPerHour);
  const paths = await writeReports(options.out, result, { candidate, since, where, cost });
  return { result, candidate, where, ...paths };
}

/** `decide what-if`: parse, run, print. */
export const whatIfCommand: OneShotCommand<WhatIfOptions, WhatIfRun> = {
  parse,
  run,
  print: ({ result, candidate, where, report, summary }, { since, dollarsPerHour }) => ({
    lines: [
      ...whatIfLines(result, { candidate, since, where, dollarsPerHour }).all,
      `report: ${report}`,
      `summary: ${summary}`,
    ],
    exitCode: 0,
  }),
};

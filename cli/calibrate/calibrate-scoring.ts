/**
 * Where `decide calibrate` gets logits for labelled states: a model file scored in process
 * (`--model`), the deployed SageMaker endpoint (`--endpoint-name`, through the SageMaker runtime
 * client), or any System One server (`--url`). All three build the request the pipeline sends
 * (`systemOneRequest`), so the logits are the ones production would get, cyclic option order and
 * layout included. Remote scoring runs a few requests at once, shows progress with rate and ETA,
 * retries transient failures (the endpoint clients' backoff), and appends every scored row to a
 * resume file, so that a run stopped half-way resumes where it stopped.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { HttpDecisionEndpoint } from "../../shared/adapters/http-decision-endpoint.ts";
import type { LabelledLogits } from "../../shared/domain/calibration/temperature.ts";
import type { EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import { EndpointRejectedError } from "../../shared/domain/errors.ts";
import { readLines } from "../../shared/domain/input/lines.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { policyKey } from "../../shared/domain/policy/policy.ts";
import { CALIBRATION_ENDPOINT_CALLS } from "../../shared/domain/topology.ts";
import { CommandError, integerFlag, UsageError } from "../args.ts";
import { awsOptions } from "../aws.ts";
import { openInput } from "../input-file.ts";
import type { ScoringSource, StateRow } from "./calibrate-source.ts";

/** The flags that choose and tune the scoring source. */
export const SCORING_FLAGS = {
  model: { type: "string" },
  "endpoint-name": { type: "string" },
  url: { type: "string" },
  concurrency: { type: "string" },
  resume: { type: "string" },
  region: { type: "string" },
  profile: { type: "string" },
} as const;

/** Values of {@link SCORING_FLAGS}. */
export type ScoringFlags = { [K in keyof typeof SCORING_FLAGS]?: string | undefined };

/** Opens the source the flags name; undefined when they name none. More than one is a usage error. */
export async function openScoringSource(flags: ScoringFlags): Promise<ScoringSource | undefined> {
  const named = (["model", "endpoint-name", "url"] as const).filter((k) => flags[k] !== undefined);
  if (named.length > 1)
    throw new UsageError(`give one of --model, --endpoint-name and --url, not ${named.join(" and ")}`);
  const remoteDefault = 4;
  if (flags.model !== undefined) {
    const { inProcessSource } = await import("./calibrate-in-process.ts");
    return inProcessSource(flags.model);
  }
  const concurrency = integerFlag("concurrency", flags.concurrency, remoteDefault, 1, 64);
  if (flags["endpoint-name"] !== undefined) {
    const { sageMakerEndpoint } = await import("../aws.ts");
    const name = flags["endpoint-name"];
    return {
      name: `endpoint ${name}`,
      endpoint: sageMakerEndpoint(name, awsOptions(flags), CALIBRATION_ENDPOINT_CALLS),
      concurrency,
      close: async () => {},
    };
  }
  if (flags.url !== undefined) {
    let endpoint: HttpDecisionEndpoint;
    try {
      endpoint = new HttpDecisionEndpoint(flags.url, CALIBRATION_ENDPOINT_CALLS);
    } catch (error) {
      throw new UsageError(`--url: ${(error as Error).message}`);
    }
    return { name: endpoint.url, endpoint, concurrency, close: async () => {} };
  }
  return undefined;
}

/** One line of the resume file. */
interface ResumeLine {
  readonly key: string;
  readonly logits: number[];
  readonly modelSha256: string;
  /** Absent in files written before it was kept. */
  readonly promptVersion?: string;
}

/** The key a row is remembered by: the policy version, the line and the state. */
function rowKey(policy: Policy, row: StateRow): string {
  return createHash("sha256")
    .update(JSON.stringify([policyKey(policy), policy.optionOrder ?? "declared", row.line, row.state]))
    .digest("hex");
}

async function readResume(path: string): Promise<Map<string, ResumeLine>> {
  const done = new Map<string, ResumeLine>();
  if (!existsSync(path)) return done;
  for await (const { line: number, text: raw } of readLines(await openInput(path))) {
    if (raw !== undefined && !raw.trim()) continue;
    try {
      // A line the reader refused (raw undefined) is unreadable too.
      const line = JSON.parse(raw ?? "") as ResumeLine;
      if (typeof line.key === "string" && Array.isArray(line.logits)) done.set(line.key, line);
    } catch {
      // A line cut short by a crash mid-write: that row is scored again.
      process.stderr.write(`${path}:${number}: unreadable, scoring that row again\n`);
    }
  }
  return done;
}

/** A labelled row from its state row and scored logits, naming what scored them. */
function labelledRow(row: StateRow, scored: ResumeLine): LabelledLogits {
  return {
    logits: scored.logits,
    label: row.label,
    group: row.group,
    modelSha256: scored.modelSha256,
    ...(scored.promptVersion ? { promptVersion: scored.promptVersion } : {}),
  };
}

/**
 * Scores `rows` under `policy` on `source`: rows the resume file holds are not sent again; the
 * others go out `source.concurrency` at a time. A row the endpoint refuses (4xx) becomes a
 * problem with its line number; a failure retries could not get past stops the run with what to do.
 */
export async function scoreStateRows(
  source: ScoringSource,
  policy: Policy,
  rows: readonly StateRow[],
  resumePath: string | undefined,
): Promise<{ rows: LabelledLogits[]; problems: { line: number; reason: string }[] }> {
  const done = resumePath ? await readResume(resumePath) : new Map<string, ResumeLine>();
  if (resumePath) await mkdir(dirname(resumePath), { recursive: true });
  const models = new Set([...done.values()].map((l) => l.modelSha256));
  const out: (LabelledLogits | undefined)[] = rows.map((row) => {
    const kept = done.get(rowKey(policy, row));
    return kept ? labelledRow(row, kept) : undefined;
  });
  const todo = rows.map((_, i) => i).filter((i) => out[i] === undefined);
  if (resumePath && todo.length < rows.length)
    process.stderr.write(
      `resuming: ${rows.length - todo.length} of ${rows.length} rows already scored in ${resumePath}\n`,
    );
  const problems: { line: number; reason: string }[] = [];
  const progress = progressLine(todo.length);
  let next = 0;
  let failure: Error | undefined;
  const worker = async () => {
    while (failure === undefined && next < todo.length) {
      const index = todo[next++]!;
      const row = rows[index]!;
      let decision: EndpointDecision;
      try {
        decision = await source.endpoint.decide(
          { id: `calibration-line-${row.line}`, policy: policy.id, state: row.state as string },
          policy,
        );
      } catch (error) {
        if (error instanceof EndpointRejectedError) {
          problems.push({ line: row.line, reason: `the endpoint refused it: ${error.message}` });
          progress.tick();
          continue;
        }
        failure ??= error as Error;
        return;
      }
      if (models.size > 0 && !models.has(decision.modelSha256)) {
        failure ??= new CommandError(
          `${resumePath} holds rows scored on another model (${[...models].join(", ").slice(0, 16)}…) than ${source.name} serves (${decision.modelSha256.slice(0, 16)}…): delete it or pass another --resume`,
        );
        return;
      }
      const line: ResumeLine = {
        key: rowKey(policy, row),
        logits: decision.logits,
        modelSha256: decision.modelSha256,
        promptVersion: decision.promptVersion,
      };
      out[index] = labelledRow(row, line);
      if (resumePath) await appendFile(resumePath, `${JSON.stringify(line)}\n`);
      progress.tick();
    }
  };
  await Promise.all(Array.from({ length: Math.min(source.concurrency, Math.max(1, todo.length)) }, worker));
  progress.end();
  if (failure) {
    const scored = out.filter(Boolean).length;
    throw new CommandError(
      `scoring on ${source.name} stopped after ${scored} of ${rows.length} rows: ${failure.message}` +
        (resumePath
          ? `\nRun the same command again to resume: the scored rows are kept in ${resumePath}.`
          : ""),
      { cause: failure },
    );
  }
  return { rows: out.filter((r): r is LabelledLogits => r !== undefined), problems };
}

/** A progress line with rate and ETA: redrawn on a terminal, every 50 rows otherwise. */
function progressLine(total: number) {
  const started = performance.now();
  let done = 0;
  return {
    tick() {
      done++;
      const rate = done / Math.max((performance.now() - started) / 1000, 1e-3);
      const line = `scored ${done}/${total} (${rate.toFixed(1)}/s, ETA ${Math.round((total - done) / rate)} s)`;
      if (process.stderr.isTTY) process.stderr.write(`\r${line}`);
      else if (done % 50 === 0 || done === total) process.stderr.write(`${line}\n`);
    },
    end() {
      if (process.stderr.isTTY && total > 0) process.stderr.write("\n");
    },
  };
}

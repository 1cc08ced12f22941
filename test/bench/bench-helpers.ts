/**
 * Shared pieces of the benchmarks: the generated benchmark model, timing with garbage
 * collection outside the clock, medians, and text of exact token counts.
 */

import { existsSync } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { isModelShapeName, MODEL_SHAPES, type ModelShapeName } from "../../endpoint/models/shapes.ts";
import { synthesizeModel } from "../../endpoint/models/synthesize.ts";
import { BASE_WORDS } from "../../endpoint/models/words.ts";
import { OPTION_LETTERS } from "../../endpoint/scorer/prompt.ts";

import { REPO_ROOT } from "../helpers/models.ts";

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

/** Times `fn` once, with garbage collected before the clock starts. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  gc();
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** The median of `values`. */
export const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Milliseconds, formatted. */
export const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;

/** Text of `count` vocabulary words: each word after a space is one token of the generated vocabulary. */
export function words(count: number, offset = 0): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(BASE_WORDS[(i * 7 + offset) % BASE_WORDS.length]!);
  return out.join(" ");
}

/**
 * The benchmark model of `shape` (in `weightType`, default the shape's), generated into
 * .cache/bench-models on first use. With `answersWithLetters` the model answers "A" or "B" at every
 * position, as a model that answers the question puts an option letter on top
 * (`answer-carrier.ts`); every question has at least two options, so the allowed-token mass takes
 * the path real answers take. Its timings are otherwise those of the random model (same shapes
 * and types).
 */
export async function benchModelPath(
  shape: ModelShapeName,
  weightType?: "Q8_0" | "Q4_0",
  { answersWithLetters = false }: { answersWithLetters?: boolean } = {},
): Promise<string> {
  const dir = join(REPO_ROOT, ".cache", "bench-models");
  const name = `${shape}${weightType ? `-${weightType}` : ""}${answersWithLetters ? "-letters" : ""}`;
  const path = join(dir, `${name}.gguf`);
  if (existsSync(path)) return path;
  await mkdir(dir, { recursive: true });
  const started = performance.now();
  const made = await synthesizeModel(MODEL_SHAPES[shape], {
    out: `${path}.tmp`,
    ...(weightType ? { weightType } : {}),
    ...(answersWithLetters ? { answerPieces: OPTION_LETTERS.slice(0, 2) } : {}),
  });
  await rename(`${path}.tmp`, path);
  console.log(
    `generated ${path}: ${(made.parameters / 1e6).toFixed(0)}M parameters, ${made.weightType}, ` +
      `${(made.bytes / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return path;
}

/** One line describing this machine. */
export function machineLine(): string {
  return `machine: ${cpus().length} x ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`;
}

/**
 * The 1-, 5- and 15-minute load averages, for printing beside a figure: on a shared machine a
 * timing means little without the load it was taken under.
 */
export function loadLine(): string {
  return `load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ")} on ${cpus().length} cores`;
}

/**
 * The model flags the scorer-level benchmarks share (--shape, --threads, --blocks) plus the
 * benchmark's own, parsed and checked.
 */
export function modelBenchFlags<K extends string>(extra: Record<K, { type: "string"; default: string }>) {
  const { values } = parseArgs({
    options: {
      shape: { type: "string", default: "qwen2-0.5b" },
      threads: { type: "string", default: "2" },
      blocks: { type: "string", default: "3" },
      ...extra,
    },
  });
  const flags = values as Record<string, string>;
  const shape = flags.shape!;
  if (!isModelShapeName(shape)) throw new Error(`unknown shape ${shape}`);
  return {
    shape,
    threads: Number(flags.threads),
    blocks: Number(flags.blocks),
    values: flags as Record<K, string>,
  };
}

export { TEAM_QUESTION } from "../helpers/decision-requests.ts";

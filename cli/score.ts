/**
 * `decide score`: scores one decision (JSON file or stdin) on a GGUF model and prints the result.
 */
import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { DecisionModel } from "../endpoint/runtime/decision-model.ts";
import type { DecisionRequestInput } from "../endpoint/scorer/request.ts";
import { DecisionScorer } from "../endpoint/scorer/scorer.ts";
import { integerFlag, requiredFlag, UsageError } from "./args.ts";

export const scoreUsage = `decide score --model <file.gguf> --input <decision.json | -> [--threads N] [--context-size N] [--reuse-off]

Scores the decision's questions and prints option probabilities as JSON.
Example: npx decide score --model tiny.gguf --input events/decisions/ticket-routing.json`;

/** Runs the command; returns the exit code. */
export async function scoreCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: "string" },
      input: { type: "string" },
      threads: { type: "string" },
      "context-size": { type: "string" },
    },
    strict: true,
  });
  const modelPath = requiredFlag("model", values.model);
  const inputPath = requiredFlag("input", values.input);
  const threads = integerFlag("threads", values.threads, availableParallelism(), 1, 256);
  const contextSize = integerFlag("context-size", values["context-size"], undefined, 64, 1 << 20);
  const text =
    inputPath === "-"
      ? await readStdin()
      : await readFile(inputPath, "utf8").catch((error: unknown) => {
          throw new UsageError(`cannot read --input ${inputPath}: ${(error as Error).message}`);
        });
  let request: unknown;
  try {
    request = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--input ${inputPath} is not valid JSON: ${(error as Error).message}`);
  }
  await using model = await DecisionModel.load({ modelPath, threads });
  await using scorer = await DecisionScorer.create(model, contextSize ? { contextSize } : {});
  const result = await scorer.score(request as DecisionRequestInput);
  console.log(JSON.stringify(result, null, 2));
  return 0;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

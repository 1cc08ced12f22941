/**
 * `decide score`: scores one System One request (JSON file or stdin, as `POST /v1/systemone`
 * takes it) on a GGUF model and prints the scorer's result.
 */
import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { DecisionModel } from "../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../endpoint/scorer/scorer.ts";
import { parseJsonStrict } from "../shared/domain/contracts/json.ts";
import {
  type DecisionRequest,
  parseSystemOneRequest,
  SystemOneViolationError,
} from "../shared/domain/contracts/system-one/index.ts";
import { CommandError, integerFlag, requiredFlag, UsageError } from "./args.ts";

export const scoreUsage = `decide score --model <file.gguf> --input <decision.json | -> [--threads N] [--context-size N] [--reuse-off]

Scores a System One request's questions and prints option probabilities as JSON.
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
  const request = readRequest(text, inputPath);
  await using model = await DecisionModel.load({ modelPath, threads });
  await using scorer = await DecisionScorer.create(model, contextSize ? { contextSize } : {});
  const result = await scorer.score(request);
  console.log(JSON.stringify(result, null, 2));
  return 0;
}

/** The request in `text`, validated by the contract before any model is loaded. */
function readRequest(text: string, inputPath: string): DecisionRequest {
  let body: unknown;
  try {
    body = parseJsonStrict(text);
  } catch (error) {
    throw new UsageError(`--input ${inputPath}: ${(error as Error).message}`);
  }
  try {
    return parseSystemOneRequest(body, { tokenMass: true });
  } catch (error) {
    if (error instanceof SystemOneViolationError)
      throw new CommandError(`--input ${inputPath}: ${error.message}`, { cause: error });
    throw error;
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

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
import { jsonLines, type OneShotCommand } from "./command.ts";
import { cannotRead } from "./input-file.ts";

export const scoreUsage = `decide score --model <file.gguf> --input <decision.json | -> [--threads N] [--context-size N] [--reuse-off]

Scores a System One request's questions and prints option probabilities as JSON.
Example: npx decide score --model tiny.gguf --input events/decisions/ticket-routing.json`;

/** What `decide score` was asked. */
interface ScoreOptions {
  readonly modelPath: string;
  /** A file, or `-` for stdin. */
  readonly inputPath: string;
  readonly threads: number;
  readonly contextSize: number | undefined;
}

/** The scorer's result. */
type ScoreResult = Awaited<ReturnType<DecisionScorer["score"]>>;

function parse(argv: string[]): ScoreOptions {
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
  return {
    modelPath: requiredFlag("model", values.model),
    inputPath: requiredFlag("input", values.input),
    threads: integerFlag("threads", values.threads, availableParallelism(), 1, 256),
    contextSize: integerFlag("context-size", values["context-size"], undefined, 64, 1 << 20),
  };
}

/** Reads and validates the request, then loads the model and scores it. */
async function run({ modelPath, inputPath, threads, contextSize }: ScoreOptions): Promise<ScoreResult> {
  const text =
    inputPath === "-"
      ? await readStdin()
      : await readFile(inputPath, "utf8").catch((error: unknown) => {
          throw cannotRead(`--input ${inputPath}`, error);
        });
  const request = readRequest(text, inputPath);
  await using model = await DecisionModel.load({ modelPath, threads });
  await using scorer = await DecisionScorer.create(model, contextSize ? { contextSize } : {});
  return await scorer.score(request);
}

/** `decide score`: parse, run, print (the result as JSON). */
export const scoreCommand: OneShotCommand<ScoreOptions, ScoreResult> = {
  parse,
  run,
  print: (result) => jsonLines(result),
};

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

/**
 * `decide capacity --lane batch --items N`: one batch of N items on the async lane of a
 * synthesized template (SageMaker Asynchronous Inference): from an idle endpoint at zero, the
 * wake-up, instance starts, target tracking on the backlog per instance, and the scale-in back to
 * zero, with the submit step's hold-back and the retries of an expired object; prints the time to
 * the first and the last result, instance-hours, the cost and the cost per 1,000 answered, the
 * lane's idle cost per month, and what expired in SageMaker's queue, if anything.
 */
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  asyncCostOf,
  asyncMinuteTable,
  asyncSummaryLine,
  describeAsyncLane,
} from "../../infra/capacity/async-report.ts";
import { type AsyncShape, readAsyncShape } from "../../infra/capacity/async-template.ts";
import { asyncInstanceFigures } from "../../infra/capacity/async-times.ts";
import { TemplateShapeError, UnknownCapacityError } from "../../infra/capacity/errors.ts";
import { type AsyncResult, simulateAsyncBatch } from "../../infra/capacity/simulation/async-sim.ts";
import { CommandError, integerFlag, requiredFlag, UsageError } from "../args.ts";
import type { OneShotCommand, Printed } from "../command.ts";

/** The template `npm run synth` writes for the default stack name. */
const DEFAULT_TEMPLATE = "cdk.out/DecisionPipeline.template.json";

/** The usage text of the batch lane. */
export const batchCapacityUsage = `decide capacity --lane batch --items N [--template ${DEFAULT_TEMPLATE}]
                [--instance-type T] [--max-instances N]

Simulates one batch of N items on the stack's async lane (SageMaker Asynchronous Inference, the
default batch lane; a stack synthesized with -c batchLane=realtime has none): objects of the
submit function's batch size, the endpoint waking from zero (its HasBacklogWithoutCapacity step
policy), instance starts, target tracking on ApproximateBacklogSizePerInstance, and the scale-in
back to the minimum. Prints the time to the first and the last result, instance-hours, the cost,
the cost per 1,000 and the idle cost per month. --instance-type and --max-instances ask "what if"
as -c asyncInstanceType / -c asyncMaxInstanceCount would (a GPU type needs npm run bench:gpu's figures).`;

/** What was asked. */
interface BatchOptions {
  readonly items: number;
  readonly template: string;
  readonly instanceType: string | undefined;
  readonly maxInstances: number | undefined;
}

/** What the simulation found, with what it ran on. */
interface BatchRun {
  readonly shape: AsyncShape;
  readonly result: AsyncResult;
  readonly figures: ReturnType<typeof asyncInstanceFigures>;
}

function parse(argv: string[]): BatchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      lane: { type: "string" },
      items: { type: "string" },
      template: { type: "string" },
      "instance-type": { type: "string" },
      "max-instances": { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.lane !== "batch") throw new UsageError(`--lane must be batch here, got "${values.lane}"`);
  return {
    items: integerFlag("items", requiredFlag("items", values.items), 1, 1, 100_000_000),
    template: values.template ?? DEFAULT_TEMPLATE,
    instanceType: values["instance-type"],
    maxInstances: integerFlag("max-instances", values["max-instances"], undefined, 1, 10_000),
  };
}

async function run(options: BatchOptions): Promise<BatchRun> {
  if (!existsSync(options.template))
    throw new CommandError(
      `no template at ${options.template}: run \`npm run synth\` first, or pass --template FILE`,
    );
  try {
    const read = readAsyncShape(JSON.parse(readFileSync(options.template, "utf8")));
    const shape: AsyncShape = {
      ...read,
      ...(options.instanceType ? { instanceType: options.instanceType } : {}),
      ...(options.maxInstances ? { maxInstances: options.maxInstances } : {}),
    };
    const figures = asyncInstanceFigures(shape.instanceType);
    const result = simulateAsyncBatch({
      shape,
      items: options.items,
      secondsPerItem: figures.secondsPerItem,
    });
    return { shape, result, figures };
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new CommandError(`${options.template} is not JSON: ${error.message}`);
    if (error instanceof TemplateShapeError || error instanceof UnknownCapacityError)
      throw new CommandError(error.message, { cause: error });
    throw error;
  }
}

function print({ shape, result, figures }: BatchRun, options: BatchOptions): Printed {
  const cost = asyncCostOf(shape, result, figures.dollarsPerHour);
  return {
    lines: [
      `template: ${options.template}`,
      ...describeAsyncLane(shape, figures.secondsPerItem, figures.measuredOn),
      "",
      ...asyncMinuteTable(result),
      "",
      asyncSummaryLine(shape, result, options.items, cost),
    ],
    exitCode: 0,
  };
}

/** `decide capacity --lane batch`: parse, run, print. */
export const batchCapacityCommand: OneShotCommand<BatchOptions, BatchRun> = { parse, run, print };

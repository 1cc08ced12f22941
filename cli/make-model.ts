/**
 * `decide make-model`: writes a generated GGUF model (test and benchmark models).
 */
import { parseArgs } from "node:util";
import { GgmlTensorType, type GgmlTensorTypeName } from "../endpoint/gguf/format.ts";
import { DEMO_MODELS, type DemoModelName } from "../endpoint/models/demo-models.ts";
import { isModelShapeName, MODEL_SHAPES, type ModelShapeName } from "../endpoint/models/shapes.ts";
import { synthesizeModel } from "../endpoint/models/synthesize.ts";
import { integerFlag, requiredFlag, UsageError } from "./args.ts";
import type { OneShotCommand, Printed } from "./command.ts";

export const makeModelUsage = `decide make-model --shape <${Object.keys(MODEL_SHAPES).join("|")}|demo|demo-large> --out <file.gguf> [--seed N] [--type F32|F16|Q8_0|Q4_0]

Writes a llama-architecture GGUF model with deterministic weights (random: real timings, meaningless answers).
  tiny         2 layers, width 64, ~1.3k-token vocabulary, F32: about 1 MB, for tests
  qwen2-0.5b   Qwen2-0.5B dimensions, 151,936-token vocabulary, Q8_0: about 500 MB, for benchmarks
  qwen2-1.5b   Qwen2-1.5B dimensions, Q8_0: about 1.6 GB
  demo         a computed bag-of-words model for the sample policies (not a language model), fitted on
               --training (default events/items/demo-training.jsonl) with --policies-dir (default events/policies)
  demo-large   the second tier of the sample moderation policy's cascade: the demo fitted on three times the
               items, expanded from --templates (default events/items/demo-templates.json); about 4x the cost per item`;

/** What `decide make-model` was asked: a demo model, or a generated shape. */
type MakeModelOptions =
  | {
      readonly shape: DemoModelName;
      readonly out: string;
      readonly training: string;
      readonly policiesDir: string;
      readonly templates: string;
    }
  | {
      readonly shape: ModelShapeName;
      readonly out: string;
      readonly seed: number;
      readonly weightType: GgmlTensorTypeName | undefined;
    };

/** What was written. */
type MadeModel =
  | { readonly shape: DemoModelName; readonly out: string; readonly words: number; readonly bytes: number }
  | {
      readonly shape: ModelShapeName;
      readonly model: Awaited<ReturnType<typeof synthesizeModel>>;
      readonly seconds: string;
    };

function parse(argv: string[]): MakeModelOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      shape: { type: "string" },
      out: { type: "string" },
      seed: { type: "string" },
      type: { type: "string" },
      training: { type: "string", default: "events/items/demo-training.jsonl" },
      "policies-dir": { type: "string", default: "events/policies" },
      templates: { type: "string", default: "events/items/demo-templates.json" },
    },
    strict: true,
  });
  const shapeName = requiredFlag("shape", values.shape);
  if (Object.hasOwn(DEMO_MODELS, shapeName)) {
    const out = requiredFlag("out", values.out);
    const { training, templates } = values;
    return {
      shape: shapeName as DemoModelName,
      out,
      training: training!,
      policiesDir: values["policies-dir"]!,
      templates: templates!,
    };
  }
  if (!isModelShapeName(shapeName)) {
    throw new UsageError(
      `--shape must be one of ${[...Object.keys(DEMO_MODELS), ...Object.keys(MODEL_SHAPES)].join(", ")}, got "${shapeName}"`,
    );
  }
  const out = requiredFlag("out", values.out);
  const seed = integerFlag("seed", values.seed, 1, 0, 2 ** 32 - 1);
  const weightType = values.type?.toUpperCase();
  if (weightType !== undefined && !Object.hasOwn(GgmlTensorType, weightType)) {
    throw new UsageError(
      `--type must be one of ${Object.keys(GgmlTensorType).join(", ")}, got "${values.type}"`,
    );
  }
  return { shape: shapeName, out, seed, weightType: weightType as GgmlTensorTypeName | undefined };
}

async function run(options: MakeModelOptions): Promise<MadeModel> {
  if (isDemo(options)) {
    const { writeDemoFile } = await import("../endpoint/models/demo-file.ts");
    const { training, policiesDir, templates } = options;
    const made = await writeDemoFile(options.out, { training, policiesDir, templates }, options.shape);
    return { shape: options.shape, out: options.out, words: made.words, bytes: made.bytes };
  }
  const started = performance.now();
  const model = await synthesizeModel(MODEL_SHAPES[options.shape], {
    out: options.out,
    seed: options.seed,
    ...(options.weightType ? { weightType: options.weightType } : {}),
  });
  return { shape: options.shape, model, seconds: ((performance.now() - started) / 1000).toFixed(1) };
}

function isDemo<T extends { readonly shape: string }>(made: T): made is Extract<T, { shape: DemoModelName }> {
  return Object.hasOwn(DEMO_MODELS, made.shape);
}

function print(made: MadeModel): Printed {
  if (isDemo(made))
    return {
      lines: [
        `wrote ${made.out}: ${made.shape} bag-of-words model (not a language model), ${made.words} words, ${(made.bytes / 2 ** 20).toFixed(1)} MiB`,
      ],
      exitCode: 0,
    };
  const { model } = made;
  return {
    lines: [
      `wrote ${model.path}: ${made.shape}, ${model.weightType}, ${(model.parameters / 1e6).toFixed(1)}M parameters, ` +
        `vocabulary ${model.vocabularySize}, ${(model.bytes / 2 ** 20).toFixed(1)} MiB in ${made.seconds} s`,
    ],
    exitCode: 0,
  };
}

/** `decide make-model`: parse, run, print. */
export const makeModelCommand: OneShotCommand<MakeModelOptions, MadeModel> = { parse, run, print };

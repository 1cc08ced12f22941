import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { MODEL_SHAPES } from "../../endpoint/models/shapes.ts";
import { synthesizeModel } from "../../endpoint/models/synthesize.ts";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { ModelFileError } from "../../endpoint/runtime/errors.ts";
import { sha256File } from "../../endpoint/runtime/model-file.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { decisionRequest, TEAM_QUESTION } from "../helpers/decision-requests.ts";
import { generatedModel } from "../helpers/models.ts";

let dir: string;
let tiny: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "model-file-"));
  tiny = await generatedModel();
});

async function expectModelFileError(path: string, problem: RegExp): Promise<void> {
  const error = await DecisionModel.load({ modelPath: path, hash: false }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelFileError);
  expect((error as Error).message).toContain(path);
  expect((error as Error).message).toMatch(problem);
}

describe("loading a model file", () => {
  it("loads the generated tiny model and reports its SHA-256", async () => {
    await using model = await DecisionModel.load({ modelPath: tiny, threads: 1 });
    expect(model.sha256).toBe(await sha256File(tiny));
    expect(model.threads).toBe(1);
    expect(model.gpu).toBe(false);
  });

  it("reads the weights into memory unless asked to map the file, and scores the same bits either way", async () => {
    const request = decisionRequest({
      state: "I was charged twice for one order",
      questions: [TEAM_QUESTION],
    });
    const scoredWith = async (memoryMap: boolean | undefined) => {
      await using model = await DecisionModel.load({
        modelPath: tiny,
        threads: 1,
        hash: false,
        ...(memoryMap === undefined ? {} : { memoryMap }),
      });
      await using scorer = await DecisionScorer.create(model, { contextSize: 512 });
      const { answers } = await scorer.score(request);
      return { mapped: model.model.useMmap, answers: answers.map(({ timings: _, ...answer }) => answer) };
    };
    const byDefault = await scoredWith(undefined);
    const mapped = await scoredWith(true);
    expect(byDefault.mapped).toBe(false);
    expect(mapped.mapped).toBe(true);
    expect(byDefault.answers[0]!.allowedTokenMass).toBeGreaterThan(0);
    expect(mapped.answers).toEqual(byDefault.answers);
  });

  it("names the file and the problem when it is missing, garbage or truncated", async () => {
    await expectModelFileError(join(dir, "absent.gguf"), /cannot be read/);
    const garbage = join(dir, "garbage.gguf");
    await writeFile(garbage, Buffer.alloc(4096, 0x41));
    await expectModelFileError(garbage, /not a GGUF file/);
    const bytes = await readFile(tiny);
    const cutHeader = join(dir, "cut-header.gguf");
    await writeFile(cutHeader, bytes.subarray(0, 2000));
    await expectModelFileError(cutHeader, /truncated inside its header/);
    const cutData = join(dir, "cut-data.gguf");
    await writeFile(cutData, bytes.subarray(0, bytes.length - 5000));
    await expectModelFileError(cutData, /truncated: tensor .* needs bytes up to/);
  });

  it("refuses files missing the keys whose absence would crash llama.cpp", async () => {
    for (const key of ["llama.attention.head_count", "llama.feed_forward_length"]) {
      const path = join(dir, `no-${key}.gguf`);
      await synthesizeModel(MODEL_SHAPES.tiny, { out: path, omitMetadata: [key] });
      await expectModelFileError(path, new RegExp(`lacks required metadata: ${key.replaceAll(".", "\\.")}`));
    }
  });

  it("reports llama.cpp's own load failure as a model file error", async () => {
    const path = join(dir, "no-epsilon.gguf");
    await synthesizeModel(MODEL_SHAPES.tiny, {
      out: path,
      omitMetadata: ["llama.attention.layer_norm_rms_epsilon"],
    });
    await expectModelFileError(path, /llama\.cpp could not load it/);
  });

  it("writes the same bytes for the same seed and different bytes for another", async () => {
    const a = join(dir, "a.gguf");
    const b = join(dir, "b.gguf");
    const c = join(dir, "c.gguf");
    await synthesizeModel(MODEL_SHAPES.tiny, { out: a, seed: 5 });
    await synthesizeModel(MODEL_SHAPES.tiny, { out: b, seed: 5 });
    await synthesizeModel(MODEL_SHAPES.tiny, { out: c, seed: 6 });
    expect(await sha256File(a)).toBe(await sha256File(b));
    expect(await sha256File(a)).not.toBe(await sha256File(c));
  });
});

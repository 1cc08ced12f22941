import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ModelFileError } from "../../endpoint/runtime/errors.ts";
import { ConfigError, resolveServerConfig } from "../../endpoint/server/config.ts";
import { describeGpu } from "../../endpoint/server/decision-service.ts";
import { discoverModelFile } from "../../endpoint/server/model-discovery.ts";
import { float, formatFloat, parseJsonStrict, stringifyJson } from "../../shared/domain/contracts/json.ts";

describe("resolveServerConfig", () => {
  it("defaults to the SageMaker contract on loopback: /opt/ml/model, port 8080", () => {
    const config = resolveServerConfig({}, {});
    expect(config.model).toBe("/opt/ml/model");
    expect(config.port).toBe(8080);
    expect(config.host).toBe("127.0.0.1");
    expect(config.gpu).toBe("auto");
    expect(config.bodyLimit).toBe(6 * 1024 * 1024);
    expect(config.deadlineMs).toBe(60_000);
    expect(config.threads).toBeGreaterThanOrEqual(1);
    expect(config.flashAttention).toBe(false);
    expect(config.memoryMap).toBe(false);
    expect(resolveServerConfig({}, { DECIDE_MEMORY_MAP: "true" }).memoryMap).toBe(true);
    expect(resolveServerConfig({ "memory-map": "false" }, { DECIDE_MEMORY_MAP: "true" }).memoryMap).toBe(
      false,
    );
    expect(() => resolveServerConfig({}, { DECIDE_MEMORY_MAP: "yes please" })).toThrow(/true or false/);
  });

  it("takes the flag over the environment, and SageMaker's port variable over PORT", () => {
    const env = {
      PORT: "9000",
      SAGEMAKER_BIND_TO_PORT: "9100",
      DECIDE_GPU: "off",
      HOST: "0.0.0.0",
      SM_MODEL_DIR: "/models",
    };
    const fromEnv = resolveServerConfig({}, env);
    expect(fromEnv.port).toBe(9100);
    expect(fromEnv.gpu).toBe("off");
    expect(fromEnv.host).toBe("0.0.0.0");
    expect(fromEnv.model).toBe("/models");
    const fromFlags = resolveServerConfig({ port: "0", gpu: "cuda", model: "m.gguf" }, env);
    expect(fromFlags.port).toBe(0);
    expect(fromFlags.gpu).toBe("cuda");
    expect(fromFlags.model).toBe("m.gguf");
  });

  it("names the flag or variable it cannot use", () => {
    expect(() => resolveServerConfig({ port: "80000" }, {})).toThrow(ConfigError);
    expect(() => resolveServerConfig({ port: "80000" }, {})).toThrow(
      /--port must be an integer from 0 to 65535/,
    );
    expect(() => resolveServerConfig({}, { DECIDE_GPU: "tpu" })).toThrow(
      /DECIDE_GPU must be one of auto, cuda, off/,
    );
    expect(() => resolveServerConfig({}, { DECIDE_FLASH_ATTENTION: "maybe" })).toThrow(/true or false/);
  });
});

describe("discoverModelFile", () => {
  it("finds the one model in a folder, nested one level, a split model through its first part", async () => {
    const root = await mkdtemp(join(tmpdir(), "discover-"));
    await writeFile(join(root, "model.gguf"), "x");
    expect(await discoverModelFile(root)).toBe(join(root, "model.gguf"));
    const nested = await mkdtemp(join(tmpdir(), "discover-"));
    await mkdir(join(nested, "inner"));
    await writeFile(join(nested, "inner", "m.gguf"), "x");
    await writeFile(join(nested, "README.txt"), "x");
    expect(await discoverModelFile(nested)).toBe(join(nested, "inner", "m.gguf"));
    const split = await mkdtemp(join(tmpdir(), "discover-"));
    for (const part of ["m-00001-of-00002.gguf", "m-00002-of-00002.gguf"])
      await writeFile(join(split, part), "x");
    expect(await discoverModelFile(split)).toBe(join(split, "m-00001-of-00002.gguf"));
  });

  it("refuses an empty folder, a folder with two models and a missing path", async () => {
    const empty = await mkdtemp(join(tmpdir(), "discover-"));
    await expect(discoverModelFile(empty)).rejects.toThrow(/holds no \.gguf file/);
    await writeFile(join(empty, "a.gguf"), "x");
    await writeFile(join(empty, "b.gguf"), "x");
    await expect(discoverModelFile(empty)).rejects.toThrow(/holds 2 models/);
    await expect(discoverModelFile(join(empty, "absent"))).rejects.toBeInstanceOf(ModelFileError);
  });

  it("leaves out the models served by name from the same folder (one SageMaker archive, a cascade's models)", async () => {
    const archive = await mkdtemp(join(tmpdir(), "discover-"));
    for (const file of ["model.gguf", "demo-large.gguf"]) await writeFile(join(archive, file), "x");
    await expect(discoverModelFile(archive)).rejects.toThrow(/serve the others by name with --extra-model/);
    expect(await discoverModelFile(archive, [join(archive, "demo-large.gguf")])).toBe(
      join(archive, "model.gguf"),
    );
  });
});

describe("describeGpu", () => {
  it("says when auto fell back to CPU, and nothing extra otherwise", () => {
    expect(describeGpu("auto", false)).toEqual({
      requested: "auto",
      active: false,
      note: "no supported GPU found: running on CPU",
    });
    expect(describeGpu("auto", "cuda")).toEqual({ requested: "auto", active: "cuda" });
    expect(describeGpu("off", false)).toEqual({ requested: "off", active: false });
  });
});

describe("endpoint JSON", () => {
  it("always writes floats with a decimal point", () => {
    expect(formatFloat(0)).toBe("0.0");
    expect(formatFloat(1)).toBe("1.0");
    expect(formatFloat(0.25)).toBe("0.25");
    expect(formatFloat(1e-7)).toBe("1.0e-7");
    expect(formatFloat(2.5e-8)).toBe("2.5e-8");
    expect(stringifyJson({ p: { a: float(0), b: float(1) }, n: 3, s: "0" })).toBe(
      '{"p":{"a":0.0,"b":1.0},"n":3,"s":"0"}',
    );
    expect(JSON.parse(stringifyJson([float(1e-7)]))).toEqual([1e-7]);
  });

  it("refuses duplicate keys with their path, and bad JSON", () => {
    expect(() => parseJsonStrict('{"q":{"a":{"criteria":{"x":"1","y":"2","x":"3"}}}}')).toThrow(
      /duplicate key "x"/,
    );
    try {
      parseJsonStrict('{"questions":{"a":{"criteria":{"x":"1","x":"2"}}}}');
    } catch (error) {
      expect((error as { param: string }).param).toBe("questions.a.criteria.x");
    }
    expect(parseJsonStrict('{"a":[{"x":1},{"x":2}],"s":"\\"x\\": 1, \\"x\\": 2"}')).toEqual({
      a: [{ x: 1 }, { x: 2 }],
      s: '"x": 1, "x": 2',
    });
    expect(() => parseJsonStrict("{not json")).toThrow(/not valid JSON/);
  });
});

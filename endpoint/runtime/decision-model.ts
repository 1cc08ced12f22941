/**
 * A loaded GGUF model: the llama.cpp handle plus what records need to cite it (path, SHA-256).
 */
import { availableParallelism } from "node:os";
import type { Llama, LlamaModel } from "node-llama-cpp";
import { ModelFileError, RuntimeDisposedError } from "./errors.ts";
import { type GpuMode, llamaInstance } from "./llama-instance.ts";
import { checkModelFile, sha256File } from "./model-file.ts";

/** Options of {@link DecisionModel.load}. */
export interface LoadModelOptions {
  /** Path of the GGUF file. */
  readonly modelPath: string;
  /** Threads for evaluation. @default the machine's cores (node-llama-cpp's own default oversubscribes) */
  readonly threads?: number;
  /** Where to run the model. @default "off" */
  readonly gpu?: GpuMode;
  /** Hash the file (SHA-256) for decision records. @default true */
  readonly hash?: boolean;
  /**
   * Map the file into memory instead of reading it in. Read in, the weights take the model's size
   * in anonymous memory and a read at load (the resident size is the same: a mapped model's pages
   * count too); mapped, llama.cpp computes on the file's cached pages in place. On the 2-core
   * machines of docs/benchmarks.md ("Issue 44, fourth pass") a decision's output row (one pass
   * over the 145 MB embedding matrix at Qwen2-0.5B's shape) took 40 to 85 ms mapped and 5 to 28 ms
   * read in; the same bits either way.
   * @default false
   */
  readonly memoryMap?: boolean;
}

/** A model ready for scoring; dispose it when done (safe to call twice). */
export class DecisionModel {
  /** The file's SHA-256, or `"unhashed"` when hashing was turned off. */
  readonly sha256: string;
  readonly path: string;
  readonly sizeBytes: number;
  readonly threads: number;
  /** `cuda`, `vulkan`, `metal` or `false` (CPU): what llama.cpp actually uses. */
  readonly gpu: Llama["gpu"];
  readonly llama: Llama;
  private readonly handle: LlamaModel;

  private constructor(init: {
    llama: Llama;
    model: LlamaModel;
    path: string;
    sha256: string;
    sizeBytes: number;
    threads: number;
  }) {
    this.llama = init.llama;
    this.handle = init.model;
    this.path = init.path;
    this.sha256 = init.sha256;
    this.sizeBytes = init.sizeBytes;
    this.threads = init.threads;
    this.gpu = init.llama.gpu;
  }

  /**
   * Checks, hashes and loads a GGUF model.
   *
   * @example
   * await using model = await DecisionModel.load({ modelPath: "tiny.gguf" });
   */
  static async load(options: LoadModelOptions): Promise<DecisionModel> {
    const threads = options.threads ?? availableParallelism();
    if (!Number.isInteger(threads) || threads < 1) {
      throw new RangeError(`threads must be a positive integer, got ${threads}`);
    }
    const checked = await checkModelFile(options.modelPath);
    const hashing = options.hash === false ? Promise.resolve("unhashed") : sha256File(options.modelPath);
    const llama = await llamaInstance(options.gpu ?? "off");
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath: options.modelPath, useMmap: options.memoryMap ?? false });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ModelFileError(options.modelPath, `llama.cpp could not load it (${reason})`, {
        cause: error,
      });
    }
    return new DecisionModel({
      llama,
      model,
      path: options.modelPath,
      sha256: await hashing,
      sizeBytes: checked.sizeBytes,
      threads,
    });
  }

  /** The node-llama-cpp model; throws once disposed. */
  get model(): LlamaModel {
    if (this.handle.disposed) throw new RuntimeDisposedError(`model ${this.path}`);
    return this.handle;
  }

  /** Context length the model was trained with. */
  get trainContextSize(): number {
    return this.handle.trainContextSize;
  }

  get disposed(): boolean {
    return this.handle.disposed;
  }

  /** Frees the model; contexts made from it are freed too. */
  async dispose(): Promise<void> {
    if (!this.handle.disposed) await this.handle.dispose();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

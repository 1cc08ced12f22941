/**
 * The endpoint's model lifecycle: loading in the background (the server answers 503 meanwhile),
 * then ready, or failed with the reason; one scorer per served model.
 */
import { basename } from "node:path";
import type { Logger } from "@aws-lambda-powertools/logger";
import { DecisionModel } from "../runtime/decision-model.ts";
import type { GpuMode } from "../runtime/llama-instance.ts";
import { DecisionScorer } from "../scorer/scorer.ts";
import type { ServerConfig } from "./config.ts";
import { discoverModelFile } from "./model-discovery.ts";

/** Where the model is in its life. */
export type ServiceState = "loading" | "ready" | "failed" | "stopping";

/** What GPU was asked for and what runs. */
export interface GpuStatus {
  readonly requested: GpuMode;
  /** `false` for CPU, else the backend (`cuda`, `vulkan`, `metal`). */
  readonly active: string | false;
  /** Set when `auto` found no GPU and fell back to CPU. */
  readonly note?: string;
}

/** Describes the GPU outcome for `/healthz`. */
export function describeGpu(requested: GpuMode, active: string | false): GpuStatus {
  if (requested === "auto" && active === false) {
    return { requested, active, note: "no supported GPU found: running on CPU" };
  }
  return { requested, active };
}

/** One model the endpoint serves: its name, file, scorer (with its own prefix cache). */
export interface ServedModel {
  readonly name: string;
  readonly file: string;
  readonly model: DecisionModel;
  readonly scorer: DecisionScorer;
}

/**
 * The models behind the endpoint: the first (the default a request without `model` gets) and
 * those served by name beside it (`extraModels`), each with its own scorer, queue and prefix
 * cache. The service is ready once every one has loaded, and failed if any could not.
 */
export class DecisionService {
  private stateValue: ServiceState = "loading";
  private failure: string | undefined;
  private loaded: ServedModel[] = [];
  private gpuStatus: GpuStatus | undefined;
  private readonly startedAt = Date.now();
  /** Settles when loading ends; never rejects (see {@link state}). */
  readonly ready: Promise<void>;

  private constructor(
    readonly config: ServerConfig,
    private readonly logger: Logger,
  ) {
    this.ready = this.load();
  }

  /** Starts loading the configured models and returns at once. */
  static start(config: ServerConfig, logger: Logger): DecisionService {
    return new DecisionService(config, logger);
  }

  get state(): ServiceState {
    return this.stateValue;
  }

  /** Why loading failed, when it did. */
  get failureReason(): string | undefined {
    return this.failure;
  }

  /** The first model's scorer once ready. */
  get scorer(): DecisionScorer | undefined {
    return this.stateValue === "ready" ? this.loaded[0]?.scorer : undefined;
  }

  /** The name clients use for the first model. */
  get modelName(): string | undefined {
    return this.loaded[0]?.name;
  }

  /** Every served model once ready, the first (the default) first. */
  get models(): readonly ServedModel[] {
    return this.stateValue === "ready" ? this.loaded : [];
  }

  /** The served model called `name` once ready, or undefined. */
  modelNamed(name: string): ServedModel | undefined {
    return this.models.find((served) => served.name === name);
  }

  private async load(): Promise<void> {
    try {
      const wanted = [{ name: this.config.modelName, path: this.config.model }, ...this.config.extraModels];
      // The first model's folder may hold the others too (one SageMaker archive): not candidates for it.
      const others = this.config.extraModels.map((extra) => extra.path);
      for (const [i, { name, path }] of wanted.entries()) {
        const served = await this.loadOne(path, name, i === 0 ? others : []);
        this.loaded.push(served);
        if (this.stateValue === "stopping") return;
      }
      const names = this.loaded.map((served) => served.name);
      const twice = names.find((name, i) => names.indexOf(name) !== i);
      if (twice) throw new Error(`two models are served as "${twice}": give each its own name`);
      this.gpuStatus = describeGpu(this.config.gpu, this.loaded[0]!.model.gpu);
      this.stateValue = "ready";
    } catch (error) {
      this.failure = error instanceof Error ? error.message : String(error);
      this.stateValue = "failed";
      this.logger.error("model failed to load", { reason: this.failure });
    }
  }

  /** Loads one model and its scorer; `name` unset takes the file name without `.gguf`. */
  private async loadOne(
    location: string,
    name: string | undefined,
    others: readonly string[],
  ): Promise<ServedModel> {
    const started = performance.now();
    const file = await discoverModelFile(location, others);
    const served = name ?? basename(file).replace(/\.gguf$/i, "");
    this.logger.info("loading model", {
      file,
      name: served,
      gpu: this.config.gpu,
      threads: this.config.threads,
      memoryMap: this.config.memoryMap,
    });
    const model = await DecisionModel.load({
      modelPath: file,
      threads: this.config.threads,
      gpu: this.config.gpu,
      memoryMap: this.config.memoryMap,
    });
    const scorer = await DecisionScorer.create(model, {
      contextSize: this.config.contextSize,
      maxQueue: this.config.queueSize,
      flashAttention: this.config.flashAttention,
      prefixSlots: this.config.prefixSlots === 0 ? "auto" : this.config.prefixSlots,
      prefixCacheBytes: this.config.prefixCacheMiB * 1024 * 1024,
    });
    this.logger.info("model ready", {
      file,
      name: served,
      sha256: model.sha256,
      gpu: describeGpu(this.config.gpu, model.gpu),
      loadMs: Math.round(performance.now() - started),
    });
    return { name: served, file, model, scorer };
  }

  /** The `/healthz` body: the first model's fields at the top, every model under `models`. */
  health(): Record<string, unknown> {
    const first = this.loaded[0];
    return {
      status: this.stateValue,
      ...(this.failure ? { reason: this.failure } : {}),
      model: first ? modelHealth(first) : null,
      threads: this.config.threads,
      context_size: this.config.contextSize,
      gpu: this.gpuStatus ?? { requested: this.config.gpu, active: null },
      queue: first
        ? queueHealth(first, this.config.queueSize)
        : { waiting: 0, running: false, limit: this.config.queueSize },
      prefix_cache: first ? cacheHealth(first) : null,
      models: this.loaded.map((served) => ({
        ...modelHealth(served),
        queue: queueHealth(served, this.config.queueSize),
        prefix_cache: cacheHealth(served),
      })),
      uptime_s: Math.round((Date.now() - this.startedAt) / 1000),
    };
  }

  /** Waits for queued work, then frees every model; safe to call twice. */
  async close(): Promise<void> {
    this.stateValue = "stopping";
    await this.ready;
    const loaded = this.loaded;
    this.loaded = [];
    for (const served of loaded) {
      await served.scorer.dispose();
      await served.model.dispose();
    }
  }
}

function modelHealth(served: ServedModel) {
  return { name: served.name, file: served.file, sha256: served.model.sha256, bytes: served.model.sizeBytes };
}

function queueHealth(served: ServedModel, limit: number) {
  return { waiting: served.scorer.queueDepth, running: served.scorer.busy, limit };
}

function cacheHealth(served: ServedModel) {
  const stats = served.scorer.cacheStats;
  return { slots: stats.slots, hits: stats.hits, misses: stats.misses, reused_tokens: stats.reusedTokens };
}

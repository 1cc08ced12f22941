/**
 * The endpoint's model lifecycle: loading in the background (the server answers 503 meanwhile),
 * then ready, or failed with the reason; one model and one scorer per process.
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

/** The model behind the endpoint. */
export class DecisionService {
  private stateValue: ServiceState = "loading";
  private failure: string | undefined;
  private loaded: { model: DecisionModel; scorer: DecisionScorer; file: string; name: string } | undefined;
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

  /** Starts loading the configured model and returns at once. */
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

  /** The scorer once ready. */
  get scorer(): DecisionScorer | undefined {
    return this.stateValue === "ready" ? this.loaded?.scorer : undefined;
  }

  /** The name clients use for the model. */
  get modelName(): string | undefined {
    return this.loaded?.name;
  }

  private async load(): Promise<void> {
    const started = performance.now();
    try {
      const file = await discoverModelFile(this.config.model);
      const name = this.config.modelName ?? basename(file).replace(/\.gguf$/i, "");
      this.logger.info("loading model", { file, gpu: this.config.gpu, threads: this.config.threads });
      const model = await DecisionModel.load({
        modelPath: file,
        threads: this.config.threads,
        gpu: this.config.gpu,
      });
      const scorer = await DecisionScorer.create(model, {
        contextSize: this.config.contextSize,
        maxQueue: this.config.queueSize,
        flashAttention: this.config.flashAttention,
        prefixSlots: this.config.prefixSlots === 0 ? "auto" : this.config.prefixSlots,
        prefixCacheBytes: this.config.prefixCacheMiB * 1024 * 1024,
      });
      this.loaded = { model, scorer, file, name };
      this.gpuStatus = describeGpu(this.config.gpu, model.gpu);
      if (this.stateValue === "stopping") return;
      this.stateValue = "ready";
      this.logger.info("model ready", {
        file,
        name,
        sha256: model.sha256,
        gpu: this.gpuStatus,
        loadMs: Math.round(performance.now() - started),
      });
    } catch (error) {
      this.failure = error instanceof Error ? error.message : String(error);
      this.stateValue = "failed";
      this.logger.error("model failed to load", { reason: this.failure });
    }
  }

  /** The `/healthz` body. */
  health(): Record<string, unknown> {
    const model = this.loaded?.model;
    return {
      status: this.stateValue,
      ...(this.failure ? { reason: this.failure } : {}),
      model: this.loaded
        ? { name: this.loaded.name, file: this.loaded.file, sha256: model?.sha256, bytes: model?.sizeBytes }
        : null,
      threads: this.config.threads,
      context_size: this.config.contextSize,
      gpu: this.gpuStatus ?? { requested: this.config.gpu, active: null },
      queue: {
        waiting: this.loaded?.scorer.queueDepth ?? 0,
        running: this.loaded?.scorer.busy ?? false,
        limit: this.config.queueSize,
      },
      prefix_cache: this.loaded
        ? {
            slots: this.loaded.scorer.cacheStats.slots,
            hits: this.loaded.scorer.cacheStats.hits,
            misses: this.loaded.scorer.cacheStats.misses,
            reused_tokens: this.loaded.scorer.cacheStats.reusedTokens,
          }
        : null,
      uptime_s: Math.round((Date.now() - this.startedAt) / 1000),
    };
  }

  /** Waits for queued work, then frees the model; safe to call twice. */
  async close(): Promise<void> {
    this.stateValue = "stopping";
    await this.ready;
    const loaded = this.loaded;
    this.loaded = undefined;
    if (loaded) {
      await loaded.scorer.dispose();
      await loaded.model.dispose();
    }
  }
}

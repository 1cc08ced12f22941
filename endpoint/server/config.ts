/**
 * The endpoint's settings, resolved once at start: each one's flag, environment variables,
 * default and reader (`SETTINGS`, from which `decide serve --help` and the CLI reference are
 * printed). How a setting is read (a flag wins over its environment variable, which wins over the
 * default) and the readers of its text: `setting-values.ts`.
 */

import { CONTAINER_ENV } from "../../shared/domain/container-env.ts";
import { hostThreads } from "../runtime/host-cores.ts";
import { GPU_MODES, type GpuMode } from "../runtime/llama-instance.ts";
import {
  boolean,
  ConfigError,
  helpLines,
  integer,
  list,
  oneOf,
  resolveSettings,
  type Setting,
  type SettingEnv,
  type SettingFlags,
  text,
} from "./setting-values.ts";

export { ConfigError } from "./setting-values.ts";

/** Everything the endpoint needs to start. */
export interface ServerConfig {
  /** GGUF file, or a folder to search (SageMaker: `/opt/ml/model`). */
  readonly model: string;
  /** Name clients use for the model (`model` in requests); the file name without `.gguf` when unset. */
  readonly modelName: string | undefined;
  /**
   * More models served beside the first, each by its own name only (a cascade's later tiers):
   * a request chooses one with its `model` field; each has its own scorer and prefix cache.
   */
  readonly extraModels: readonly ExtraModel[];
  /** More names accepted for the served model (besides the System One aliases clients send by default). */
  readonly modelAliases: readonly string[];
  /** Accept any model name, as llama.cpp's server does on a one-model endpoint. */
  readonly anyModel: boolean;
  /** Keep answering 503 (with the reason in /healthz) when the model fails to load, instead of exiting 1. */
  readonly keepRunningOnFailure: boolean;
  readonly host: string;
  readonly port: number;
  readonly threads: number;
  readonly contextSize: number;
  /** Requests allowed to wait for the model before 503. */
  readonly queueSize: number;
  /** Largest request body in bytes before 413. */
  readonly bodyLimit: number;
  /** Longest a request may take, waiting included, in milliseconds. */
  readonly deadlineMs: number;
  readonly logLevel: "DEBUG" | "INFO" | "WARN" | "ERROR";
  readonly gpu: GpuMode;
  readonly flashAttention: boolean;
  /** Map the model file instead of reading it into memory (`LoadModelOptions.memoryMap`). */
  readonly memoryMap: boolean;
  /** Read the allowed-token mass unless a request says otherwise. */
  readonly tokenMass: boolean;
  /** Cached prefixes (one per interleaved policy); 0: as many as `prefixCacheMiB` holds. */
  readonly prefixSlots: number;
  /** KV-cache memory the automatic slot count may use, in MiB. */
  readonly prefixCacheMiB: number;
}

/** A model served by name beside the first (`--extra-model NAME=PATH`). */
export interface ExtraModel {
  readonly name: string;
  /** GGUF file, or a folder holding one. */
  readonly path: string;
}

/** The characters of a model name a request may send (and a record may keep). */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** `NAME=PATH` entries, comma-separated; a name twice is refused. */
const extraModels = (raw: string, name: string): ExtraModel[] => {
  const models = list(raw).map((entry) => {
    const at = entry.indexOf("=");
    const modelName = entry.slice(0, Math.max(at, 0)).trim();
    const path = entry.slice(at + 1).trim();
    if (at < 0 || !MODEL_NAME.test(modelName) || !path)
      throw new ConfigError(
        `${name} takes NAME=PATH (a name of letters, digits, '.', '_', ':' or '-', then a GGUF file or folder), got "${entry}"`,
      );
    return { name: modelName, path };
  });
  const names = models.map((m) => m.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new ConfigError(`${name} names the model "${twice}" twice`);
  return models;
};

/** Default folder where SageMaker unpacks the model archive. */
export const SAGEMAKER_MODEL_DIR = "/opt/ml/model";

/** The settings, in the order `decide serve --help` lists them. */
export const SETTINGS = {
  model: {
    flag: "model",
    env: [CONTAINER_ENV.DECIDE_MODEL, CONTAINER_ENV.SM_MODEL_DIR],
    fallback: () => SAGEMAKER_MODEL_DIR,
    parse: text,
    help: "GGUF file or folder holding one",
  },
  modelName: {
    flag: "model-name",
    env: [CONTAINER_ENV.DECIDE_MODEL_NAME],
    fallback: () => undefined,
    parse: text,
    help: "name clients send as `model`",
  },
  extraModels: {
    flag: "extra-model",
    repeatable: true,
    env: [CONTAINER_ENV.DECIDE_EXTRA_MODELS],
    fallback: () => [],
    parse: extraModels,
    help: "another model served by name: NAME=PATH (repeatable; comma-separated in the variable)",
  },
  modelAliases: {
    flag: "model-alias",
    repeatable: true,
    env: [CONTAINER_ENV.DECIDE_MODEL_ALIASES],
    fallback: () => [],
    parse: list,
    help: "more accepted model names (repeatable; comma-separated in the variable)",
  },
  anyModel: {
    flag: "any-model",
    switch: true,
    env: [CONTAINER_ENV.DECIDE_ANY_MODEL],
    fallback: () => false,
    parse: boolean,
    help: "accept any model name (as llama.cpp's server does)",
  },
  keepRunningOnFailure: {
    flag: "keep-running-on-failure",
    switch: true,
    env: [CONTAINER_ENV.DECIDE_KEEP_RUNNING_ON_FAILURE],
    fallback: () => false,
    parse: boolean,
    help: "answer 503 with the reason instead of exiting 1 when the model fails to load",
  },
  host: {
    flag: "host",
    env: [CONTAINER_ENV.HOST],
    fallback: () => "127.0.0.1",
    parse: text,
    help: "address to listen on (0.0.0.0 in the container)",
  },
  port: {
    flag: "port",
    env: [CONTAINER_ENV.SAGEMAKER_BIND_TO_PORT, CONTAINER_ENV.PORT],
    fallback: () => 8080,
    parse: integer(0, 65535),
    help: "port (SageMaker: 8080)",
  },
  threads: {
    flag: "threads",
    env: [CONTAINER_ENV.DECIDE_THREADS],
    fallback: () => hostThreads().threads,
    parse: integer(1, 512),
    help: "evaluation threads (physical cores usable under affinity and cgroup quota)",
  },
  contextSize: {
    flag: "context-size",
    env: [CONTAINER_ENV.DECIDE_CONTEXT_SIZE],
    fallback: () => 4096,
    parse: integer(64, 1 << 20),
    help: "tokens per prompt",
  },
  queueSize: {
    flag: "queue-size",
    env: [CONTAINER_ENV.DECIDE_QUEUE_SIZE],
    fallback: () => 16,
    parse: integer(0, 100_000),
    help: "requests that may wait before 503",
  },
  bodyLimit: {
    flag: "body-limit",
    env: [CONTAINER_ENV.DECIDE_BODY_LIMIT],
    fallback: () => 6 * 1024 * 1024,
    parse: integer(1024, 1 << 30),
    help: "largest body in bytes (SageMaker real-time: 6 MB)",
  },
  deadlineMs: {
    flag: "deadline-ms",
    env: [CONTAINER_ENV.DECIDE_DEADLINE_MS],
    fallback: () => 60_000,
    parse: integer(100, 3_600_000),
    help: "per-request deadline (SageMaker real-time: 60 s)",
  },
  logLevel: {
    flag: "log-level",
    env: [CONTAINER_ENV.LOG_LEVEL, CONTAINER_ENV.POWERTOOLS_LOG_LEVEL],
    fallback: () => "INFO" as const,
    parse: oneOf(["DEBUG", "INFO", "WARN", "ERROR"] as const),
    help: "DEBUG, INFO, WARN or ERROR",
  },
  gpu: {
    flag: "gpu",
    env: [CONTAINER_ENV.DECIDE_GPU],
    fallback: () => "auto" as const,
    parse: oneOf(GPU_MODES),
    help: "auto (CUDA when present, else CPU), cuda or off",
  },
  flashAttention: {
    flag: "flash-attention",
    env: [CONTAINER_ENV.DECIDE_FLASH_ATTENTION],
    fallback: () => false,
    parse: boolean,
    help: "faster prefill, inexact prefix reuse",
  },
  memoryMap: {
    flag: "memory-map",
    env: [CONTAINER_ENV.DECIDE_MEMORY_MAP],
    fallback: () => false,
    parse: boolean,
    help: "map the model file instead of reading it in (faster load, slower decisions here)",
  },
  tokenMass: {
    flag: "token-mass",
    env: [CONTAINER_ENV.DECIDE_TOKEN_MASS],
    fallback: () => true,
    parse: boolean,
    help: "read allowed-token mass by default",
  },
  prefixSlots: {
    flag: "prefix-slots",
    env: [CONTAINER_ENV.DECIDE_PREFIX_SLOTS],
    fallback: () => 0,
    parse: integer(0, 64),
    help: "cached prefixes, one per interleaved policy (0: fit --prefix-cache-mb)",
  },
  prefixCacheMiB: {
    flag: "prefix-cache-mb",
    env: [CONTAINER_ENV.DECIDE_PREFIX_CACHE_MB],
    fallback: () => 512,
    parse: integer(1, 1 << 20),
    help: "KV-cache memory for automatic prefix slots",
  },
} satisfies { [K in keyof ServerConfig]: Setting<ServerConfig[K]> };

/**
 * Resolves the configuration from `flags` (as parsed from the command line) and `env`.
 * Throws {@link ConfigError} naming the flag or variable at fault.
 */
export function resolveServerConfig(flags: SettingFlags, env: SettingEnv): ServerConfig {
  return resolveSettings(SETTINGS, flags, env) as unknown as ServerConfig;
}

/** One line per setting, for `--help` and docs/http-api.md. */
export function settingsHelp(): string {
  return helpLines(SETTINGS);
}

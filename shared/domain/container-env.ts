/**
 * The decision container's environment variable names, each written once: its settings table
 * reads them (`endpoint/server/config.ts`, where each setting lists its variables, the first the
 * preferred) and the endpoint constructs set them on the SageMaker model (`infra/constructs`).
 */

const NAMES = [
  "DECIDE_MODEL",
  "SM_MODEL_DIR",
  "DECIDE_MODEL_NAME",
  "DECIDE_EXTRA_MODELS",
  "DECIDE_MODEL_ALIASES",
  "DECIDE_ANY_MODEL",
  "DECIDE_KEEP_RUNNING_ON_FAILURE",
  "HOST",
  "SAGEMAKER_BIND_TO_PORT",
  "PORT",
  "DECIDE_THREADS",
  "DECIDE_CONTEXT_SIZE",
  "DECIDE_QUEUE_SIZE",
  "DECIDE_BODY_LIMIT",
  "DECIDE_DEADLINE_MS",
  "LOG_LEVEL",
  "POWERTOOLS_LOG_LEVEL",
  "DECIDE_GPU",
  "DECIDE_FLASH_ATTENTION",
  "DECIDE_MEMORY_MAP",
  "DECIDE_TOKEN_MASS",
  "DECIDE_PREFIX_SLOTS",
  "DECIDE_PREFIX_CACHE_MB",
] as const;

/** A variable the decision container reads. */
export type ContainerEnvName = (typeof NAMES)[number];

/** Each container variable's name, by itself: `CONTAINER_ENV.DECIDE_GPU`. */
export const CONTAINER_ENV = Object.freeze(Object.fromEntries(NAMES.map((name) => [name, name]))) as {
  readonly [K in ContainerEnvName]: K;
};

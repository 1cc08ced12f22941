/**
 * A cascade's later models on the deployed stack (`-c tierModels=demo-large=demo-large.gguf`):
 * GGUF files in the same model archive as the first model, served by name by the same container
 * (`DECIDE_EXTRA_MODELS`, each with its own scorer, queue and prefix cache), and named to the
 * decide function as answered by that endpoint (`TIER_ENDPOINTS`, each model mapped to the
 * endpoint's own name: `tierEndpointsVariable`) so that it asks them. Why one container rather than a second
 * endpoint or inference components: the later models answer only what the first passes on, a
 * share of the traffic too small to keep a second fleet of its own warm (its minimum instance
 * would cost as much as the first fleet's), and models of this size fit beside each other in an
 * instance's memory. The real-time endpoint and the async one load the same archive with the same
 * setting (so each finds its first model among the files); the async lane still asks the first
 * model only.
 */
import { CONTAINER_ENV } from "../../../shared/domain/container-env.ts";

/** One later model: the name policies ask it by, and its file in the archive. */
export interface TierModel {
  readonly name: string;
  readonly file: string;
}

/** Where SageMaker unpacks the model archive in the container. */
const MODEL_DIR = "/opt/ml/model";
/** A model name as the endpoint serves it (the policy's `cascade[].model`). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** A file inside the archive: a relative path to a `.gguf`, no `..`. */
const FILE = /^(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9._-][A-Za-z0-9._/-]*\.gguf$/i;

/** Parses `NAME=FILE[,NAME=FILE…]`, naming what is wrong with a precise message. */
export function tierModelsFromContext(value: string): TierModel[] {
  const models = value
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [name, file, ...rest] = entry.split("=");
      if (!name || !file || rest.length > 0)
        throw new Error(`-c tierModels: "${entry}" is not NAME=FILE (e.g. demo-large=demo-large.gguf)`);
      if (!NAME.test(name))
        throw new Error(`-c tierModels: "${name}" is not a model name (letters, digits, . _ : -)`);
      if (!FILE.test(file))
        throw new Error(
          `-c tierModels: "${file}" is not a .gguf file inside the model archive (a relative path)`,
        );
      return { name, file };
    });
  const names = models.map((m) => m.name);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice) throw new Error(`-c tierModels: "${twice}" is named twice`);
  return models;
}

/** The container's setting that serves `models` by name beside the first model; none without. */
export function servedModelsEnvironment(models: readonly TierModel[]): Record<string, string> {
  if (models.length === 0) return {};
  return {
    [CONTAINER_ENV.DECIDE_EXTRA_MODELS]: models.map((m) => `${m.name}=${MODEL_DIR}/${m.file}`).join(","),
  };
}

/**
 * The decide function's endpoint calls once later models are asked in the same invocation: each
 * item may call once per model, so the time one item could take before (tries × timeout, under
 * the function's timeout) is shared among the calls, one try each (a failed call returns the item
 * to its queue instead of being tried again within the invocation).
 */
export function endpointCallsWith(
  models: readonly TierModel[],
  calls: { readonly endpointTimeoutMs: number; readonly endpointAttempts: number },
): { timeoutMs: number; attempts: number } {
  if (models.length === 0) return { timeoutMs: calls.endpointTimeoutMs, attempts: calls.endpointAttempts };
  const budgetMs = calls.endpointTimeoutMs * calls.endpointAttempts;
  return {
    timeoutMs: Math.min(calls.endpointTimeoutMs, Math.floor(budgetMs / (1 + models.length))),
    attempts: 1,
  };
}

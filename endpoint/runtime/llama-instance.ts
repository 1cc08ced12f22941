/**
 * One llama.cpp binding per process and GPU setting, loaded on first use.
 */
import { getLlama, type Llama, LlamaLogLevel } from "node-llama-cpp";
import { DecisionRuntimeError } from "./errors.ts";

/** Where to run the model: `auto` uses CUDA when the machine has it and falls back to CPU. */
export const GPU_MODES = ["auto", "cuda", "off"] as const;
/** A GPU setting. */
export type GpuMode = (typeof GPU_MODES)[number];

const instances = new Map<GpuMode, Promise<Llama>>();

/** The llama.cpp binding for `gpu`, created once; prebuilt binaries only, never a source build. */
export function llamaInstance(gpu: GpuMode): Promise<Llama> {
  let instance = instances.get(gpu);
  if (!instance) {
    instance = getLlama({
      gpu: gpu === "off" ? false : gpu,
      build: "never",
      // Load warnings (e.g. unset optional token ids) are noise for users; errors still show.
      logLevel: LlamaLogLevel.error,
    }).catch((error: unknown) => {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new DecisionRuntimeError(
        "gpu_unavailable",
        `no llama.cpp binary for --gpu ${gpu} runs on this machine (${reason}); ` +
          "use --gpu auto to fall back to CPU, or --gpu off",
        { cause: error },
      );
    });
    instance.catch(() => instances.delete(gpu));
    instances.set(gpu, instance);
  }
  return instance;
}

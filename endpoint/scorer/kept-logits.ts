/**
 * A second readout at the position just evaluated, without evaluating it again.
 *
 * The allowed-token mass needs two readouts at the answer position: the top token over the whole,
 * unbiased vocabulary, then the letters' own distribution (`question-pass.ts`). node-llama-cpp
 * 3.21.1 reads one readout per evaluated position, with one sampler, and returns no logits, so the
 * second one used to evaluate the last two prompt tokens again (about 30 ms at the Qwen2-0.5B
 * shape on 2 cores, docs/benchmarks.md). llama.cpp keeps the logits of a context's last batch
 * until its next decode, and node-llama-cpp's native context samples from them by output index
 * (-1: the last). This module reaches that through three internal members of the pinned version:
 * the context's native `_ctx.sampleToken`, the bindings' `AddonSampler` and the sequence's
 * `_resolveSamplerConfig`, which turns readout options into the native sampler's configuration.
 *
 * Internal members can change under any upgrade, so the shortcut is trusted only after it agreed
 * once, per model: a model's first second readout evaluates the prompt's last tokens again with
 * that readout, the public way, and then reads the same readout from the logits that evaluation
 * kept; later ones read kept logits only if both gave the same token, confidence and
 * probabilities, bit for bit (the same logits, so any difference is the internals'). A
 * difference, a missing member, a readout missing what was asked or an error turns it off for
 * that model, at any time (a Node.js warning says why), and every second readout evaluates
 * again, as before.
 */
import type { ControlledEvaluateInputItem, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";

/** What to read at the last prompt position (node-llama-cpp's `generateNext` options). */
export type NextTokenReadout = NonNullable<
  NonNullable<Extract<ControlledEvaluateInputItem, readonly unknown[]>[1]>["generateNext"]
>;

/** A readout read from kept logits: what node-llama-cpp's own readout returns. */
export interface KeptReadout {
  readonly token: Token | null;
  readonly probabilities?: ReadonlyMap<Token, number>;
  readonly confidence?: number;
}

/** Whether a model's second readouts read kept logits: not yet checked, checked and used, or off (with why). */
export type KeptLogitsState =
  | { readonly state: "unchecked" }
  | { readonly state: "trusted" }
  | { readonly state: "off"; readonly reason: string };

/**
 * Per model: models of one process may differ in what they run on (CPU, or layers offloaded to a
 * GPU), so trust earned on one does not carry to another.
 */
let states = new WeakMap<LlamaModel, KeptLogitsState>();

/** Where `model`'s second readouts stand. */
export function keptLogitsState(model: LlamaModel): KeptLogitsState {
  return states.get(model) ?? { state: "unchecked" };
}

/**
 * Records an outcome for `model`: `true`, the check agreed (trusted, unless already off); a
 * reason, a check differed or a read failed (off from then on, whatever it was, with a warning).
 */
export function settleKeptLogits(model: LlamaModel, outcome: true | string): void {
  const was = keptLogitsState(model).state;
  if (outcome === true) {
    if (was === "unchecked") states.set(model, { state: "trusted" });
    return;
  }
  if (was === "off") return;
  process.emitWarning(`second readouts evaluate again: ${outcome}`, { code: "DECISION_KEPT_LOGITS_OFF" });
  states.set(model, { state: "off", reason: outcome });
}

/** Forgets every model's check, so that the next second readout checks again (tests). */
export function resetKeptLogits(): void {
  states = new WeakMap();
}

/** node-llama-cpp's native sampler, as far as this module uses it. */
interface NativeSampler {
  applyConfig(config: object): void;
  dispose(): void;
}

/** The native context's sampling call: output index, sampler, return probabilities, return confidence. */
type SampleToken = (
  index: number,
  sampler: NativeSampler,
  probabilities: boolean,
  confidence: boolean,
) => Promise<[number, number[]?, number?]>;

/** The three internal members, found where node-llama-cpp 3.21.1 has them, or an error. */
function internals(sequence: LlamaContextSequence) {
  const context = (sequence.context as unknown as { _ctx?: { sampleToken?: unknown } })._ctx;
  const model = sequence.model as unknown as {
    _model?: unknown;
    _llama?: { _bindings?: { AddonSampler?: unknown } };
  };
  const Sampler = model._llama?._bindings?.AddonSampler;
  const resolve = (sequence as unknown as { _resolveSamplerConfig?: unknown })._resolveSamplerConfig;
  if (
    typeof context?.sampleToken !== "function" ||
    typeof Sampler !== "function" ||
    typeof resolve !== "function"
  )
    throw new Error("node-llama-cpp's internal sampling members are not where version 3.21.1 has them");
  return {
    sample: (context.sampleToken as SampleToken).bind(context),
    sampler: () => new (Sampler as new (model: unknown) => NativeSampler)(model._model),
    resolve: (options: object) => (resolve as (options: object) => object).call(sequence, options),
  };
}

/**
 * Reads `readout` from the logits of `sequence`'s last evaluated position, which the caller
 * guarantees is the last output of its context's last batch (one sequence in the context, nothing
 * decoded since). Throws when the internals are not as expected; the caller then turns it off.
 */
export async function readKeptLogits(
  sequence: LlamaContextSequence,
  readout: NextTokenReadout,
): Promise<KeptReadout> {
  const native = internals(sequence);
  const options = readout.options ?? {};
  const config = native.resolve({
    temperature: options.temperature,
    minP: options.minP,
    topK: options.topK,
    topP: options.topP,
    seed: options.seed,
    xtc: options.xtc,
    repeatPenalty: options.repeatPenalty,
    dryRepeatPenalty: options.dryRepeatPenalty,
    tokenBias: options.tokenBias,
  });
  const sampler = native.sampler();
  try {
    sampler.applyConfig(config);
    const [token, flat, confidence] = await native.sample(
      -1,
      sampler,
      !!readout.probabilities,
      !!readout.confidence,
    );
    return {
      token: token === -1 ? null : (token as Token),
      ...(flat ? { probabilities: pairs(flat) } : {}),
      ...(confidence === undefined ? {} : { confidence }),
    };
  } finally {
    sampler.dispose();
  }
}

/** node-llama-cpp's flat [token, probability, token, probability, ...] as a map. */
function pairs(flat: readonly number[]): Map<Token, number> {
  const map = new Map<Token, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(flat[i] as Token, flat[i + 1]!);
  return map;
}

/**
 * Whether two readouts of `readout` are the same, bit for bit (the check that earns the shortcut
 * its trust): the token when asked, the confidence and every probability.
 */
export function sameReadout(readout: NextTokenReadout, a: KeptReadout, b: KeptReadout): boolean {
  if ((readout.token && a.token !== b.token) || a.confidence !== b.confidence) return false;
  const p = a.probabilities ?? new Map<Token, number>();
  const q = b.probabilities ?? new Map<Token, number>();
  if (p.size !== q.size) return false;
  for (const [token, value] of p) if (q.get(token) !== value) return false;
  return true;
}

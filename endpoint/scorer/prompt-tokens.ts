/**
 * The tokens of a rendered decision prompt, with the tokens of its shared head kept between
 * prompts.
 *
 * Questions over one state render prompts that differ only in their last JSON key (the criterion,
 * state-first), and items under one policy only in theirs (the evidence, policy-first). llama.cpp
 * tokenizes a 10 KB prompt in about 6 ms, 5 to 10 percent of a question that reuses the state's
 * cached tokens (docs/benchmarks.md), so the part before the last key is tokenized once.
 *
 * Why that is exact, and where: a SentencePiece vocabulary (llama.cpp's "spm", the one
 * `decide make-model` writes and the Llama 2 family uses) is tokenized by merging neighbouring
 * symbols into vocabulary pieces, best score first, over the whole text, with nothing split
 * beforehand. A merge can join the characters either side of a cut only if some piece holds both,
 * in that order. Where no piece does, no symbol ever spans the cut, each side goes through the
 * same merges as it would alone, and the tokens of the whole are those of the head followed by
 * those of the tail. node-llama-cpp tokenizes a text run after other content with a newline put
 * before it and its tokens taken off again ("trimLeadingSpace"), so the tail's first character
 * must not join a newline either; a tail that starts with whitespace (which node-llama-cpp
 * tokenizes as it is, without that newline, when it starts with one) is never cut. Both pairs
 * are checked against the model's pieces; a cut that fails, and every other vocabulary
 * (byte-level BPE splits with a pre-tokenizer's regular expression first, WordPiece and Unigram
 * work otherwise), tokenize the prompt whole, as before. So does a SentencePiece vocabulary with
 * user-defined pieces: llama.cpp splits those out of the text before merging, and puts a space
 * after one where the model adds a space prefix, which the tail tokenized alone would not get.
 * A check at creation compares the cut with the whole on probe prompts and turns the cut off for
 * a model where they differ.
 */
import {
  type ChatHistoryItem,
  type ChatWrapper,
  type LlamaModel,
  type LlamaText,
  LlamaVocabularyType,
  SpecialToken,
  SpecialTokensText,
  type Token,
} from "node-llama-cpp";
import type { DecisionPrompt } from "./prompt.ts";

/** The two messages of a prompt, and where its user message's shared head ends when known. */
export type PromptMessages = Pick<DecisionPrompt, "system" | "user"> &
  Partial<Pick<DecisionPrompt, "sharedHead">>;

/** Heads kept at once: one per prefix slot is enough; a few more cost about 30 KB each. */
const KEPT_HEADS = 8;

/** SentencePiece writes a space as this character in its pieces. */
const SPM_SPACE = "\u2581";

/** Renders a prompt through the model's chat template: system, user, then the model's turn. */
export function renderPrompt(
  wrapper: ChatWrapper,
  prompt: Pick<DecisionPrompt, "system" | "user">,
): LlamaText {
  const chatHistory: ChatHistoryItem[] = [
    { type: "system", text: prompt.system },
    { type: "user", text: prompt.user },
    { type: "model", response: [] },
  ];
  return wrapper.generateContextState({ chatHistory }).contextText;
}

/** Tokenizes rendered prompts for one model; not safe to share between models. */
export class PromptTokenizer {
  private readonly heads = new Map<string, readonly Token[]>();
  private readonly pairAllowed = new Map<string, boolean>();
  private cutting: boolean;
  private spliced = 0;

  private constructor(
    private readonly model: LlamaModel,
    private readonly wrapper: ChatWrapper,
    private readonly pieces: readonly string[] | undefined,
  ) {
    this.cutting = pieces !== undefined;
  }

  /** A tokenizer for `model`; the cut is on only for a SentencePiece model that passes the check. */
  static create(model: LlamaModel, wrapper: ChatWrapper): PromptTokenizer {
    const tokenizer = new PromptTokenizer(model, wrapper, sentencePiecePieces(model));
    if (tokenizer.cutting && !tokenizer.selfCheck()) tokenizer.cutting = false;
    return tokenizer;
  }

  /** Whether prompts are cut before their last key (false: always tokenized whole). */
  get cuts(): boolean {
    return this.cutting;
  }

  /** Prompts whose head tokens were taken from an earlier prompt. */
  get reusedHeads(): number {
    return this.spliced;
  }

  /** The prompt's tokens: exactly `renderPrompt(...).tokenize(model.tokenizer)`. */
  tokens(prompt: PromptMessages): Token[] {
    const text = renderPrompt(this.wrapper, prompt);
    if (!this.cutting || prompt.sharedHead === undefined || prompt.sharedHead <= 0) {
      return text.tokenize(this.model.tokenizer);
    }
    return this.tokenizeCut(text, prompt.user, prompt.sharedHead);
  }

  /**
   * node-llama-cpp's `LlamaText.tokenize` (3.21.1), with the text run holding the user message
   * cut near its shared head when the cut is safe. Every non-empty run there is tokenized with
   * "trimLeadingSpace", since the run's own text counts as content before it.
   */
  private tokenizeCut(text: LlamaText, user: string, sharedHead: number): Token[] {
    const tokenizer = this.model.tokenizer;
    const result: Token[] = [];
    let run = "";
    const flush = () => {
      if (run !== "") result.push(...this.tokenizeRun(run, user, sharedHead));
      run = "";
    };
    for (const value of text.values) {
      if (value instanceof SpecialToken) {
        flush();
        result.push(...value.tokenize(tokenizer));
      } else if (value instanceof SpecialTokensText) {
        // node-llama-cpp counts the run it has just tokenized as content even if it gave no token.
        const content = result.length > 0 || run !== "";
        flush();
        result.push(...value.tokenize(tokenizer, content));
      } else {
        run += value;
      }
    }
    flush();
    return result;
  }

  /** One text run: whole, or the kept head's tokens followed by the tail's. */
  private tokenizeRun(run: string, user: string, sharedHead: number): Token[] {
    const whole = () => this.model.tokenize(run, false, "trimLeadingSpace");
    const start = run.lastIndexOf(user);
    if (start < 0) return whole();
    const cut = this.safeCut(run, start + sharedHead);
    if (cut === undefined) return whole();
    const headText = run.slice(0, cut);
    let head = this.heads.get(headText);
    if (head) {
      this.heads.delete(headText);
      this.spliced++;
    } else {
      head = this.model.tokenize(headText, false, "trimLeadingSpace");
    }
    this.heads.set(headText, head);
    if (this.heads.size > KEPT_HEADS) this.heads.delete(this.heads.keys().next().value!);
    return [...head, ...this.model.tokenize(run.slice(cut), false, "trimLeadingSpace")];
  }

  /**
   * A cut at `at` (before the comma of the last key), one after it or two after it (inside the
   * key's opening quote), whichever first has no piece across it; undefined when none has.
   */
  private safeCut(run: string, at: number): number | undefined {
    for (const cut of [at + 2, at + 1, at]) {
      if (cut <= 0 || cut >= run.length) continue;
      const before = run.charCodeAt(cut - 1);
      const after = run.charCodeAt(cut);
      // Printable ASCII on both sides: no surrogate pair, no escaped space, and no tail starting
      // with a newline (which "trimLeadingSpace" tokenizes another way).
      if (!printableAscii(before) || !printableAscii(after)) continue;
      if (this.allowed(run[cut - 1]! + run[cut]!) && this.allowed(`\n${run[cut]!}`)) return cut;
    }
    return undefined;
  }

  /** Whether no piece of the vocabulary holds `pair` (two characters), memoized. */
  private allowed(pair: string): boolean {
    let allowed = this.pairAllowed.get(pair);
    if (allowed === undefined) {
      const written = pair.replaceAll(" ", SPM_SPACE);
      allowed = !this.pieces!.some((piece) => piece.includes(written));
      this.pairAllowed.set(pair, allowed);
    }
    return allowed;
  }

  /**
   * The cut against the whole on probe prompts whose shared head ends in characters the
   * decision prompts end theirs with: a flag of this model's tokenizer that the argument above
   * does not cover (a space added at every call, say) shows as a difference here.
   */
  private selfCheck(): boolean {
    const probes: PromptMessages[] = ["criterion", "evidence"].flatMap((key) =>
      [`{"A":"yes","B":"no"}`, `"two words"`, `["x"]`, "12"].map((value) => {
        const head = `{"evidence":"The probe's text, with \\"quotes\\" and 3 numbers.","options":${value}`;
        const user = `${head},"${key}":"Does it hold?"}`;
        return { system: "Answer with a letter.", user, sharedHead: head.length };
      }),
    );
    const heads = this.spliced;
    try {
      return probes.every(
        (probe) =>
          sameTokens(this.tokens(probe), renderPrompt(this.wrapper, probe).tokenize(this.model.tokenizer)) &&
          sameTokens(this.tokens(probe), renderPrompt(this.wrapper, probe).tokenize(this.model.tokenizer)),
      );
    } finally {
      this.heads.clear();
      this.spliced = heads;
    }
  }
}

/** `tokenizer.ggml.token_type` of a piece llama.cpp splits out of the text before merging. */
const USER_DEFINED_PIECE = 4;

/**
 * The pieces of a SentencePiece vocabulary without user-defined pieces, from the GGUF metadata;
 * undefined for any other vocabulary (its prompts are tokenized whole).
 */
function sentencePiecePieces(model: LlamaModel): readonly string[] | undefined {
  if (model.vocabularyType !== LlamaVocabularyType.spm) return undefined;
  const ggml = model.fileInfo.metadata.tokenizer?.ggml;
  const pieces: unknown = ggml?.tokens;
  const types: unknown = ggml?.token_type;
  if (!Array.isArray(pieces) || !pieces.every((piece) => typeof piece === "string")) return undefined;
  if (!Array.isArray(types) || types.length !== pieces.length || types.includes(USER_DEFINED_PIECE))
    return undefined;
  return pieces;
}

/** A character from "!" to "~": no space, no control character, nothing beyond ASCII. */
function printableAscii(code: number): boolean {
  return code > 0x20 && code < 0x7f;
}

function sameTokens(a: readonly Token[], b: readonly Token[]): boolean {
  return a.length === b.length && a.every((token, i) => token === b[i]);
}

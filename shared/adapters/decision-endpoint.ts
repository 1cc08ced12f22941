/**
 * Calls the decision endpoint through SageMaker's InvokeEndpoint: a System One request built
 * from the policy, a per-call timeout, and retries with exponential backoff and full jitter for
 * throttling, 5xx, timeouts and model errors from a failing container. A model error that wraps a
 * 4xx means the item itself was refused: that is never retried.
 */
import { InvokeEndpointCommand, type SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { backoff } from "../backoff.ts";
import type { Item } from "../item.ts";
import type { Policy } from "../policy/policy.ts";
import { EndpointRejectedError, EndpointUnavailableError } from "./errors.ts";

/** What the endpoint said about one item, in the policy's option order. */
export interface EndpointDecision {
  /** Option logits at temperature 1 (log-probabilities over the options). */
  readonly logits: number[];
  readonly allowedTokenMass: number | null;
  readonly modelSha256: string;
  readonly promptSha256: string;
  readonly promptVersion: string;
  readonly latencyMs: number;
}

/** Something that decides items (the SageMaker endpoint, or a test double). */
export interface DecidesItems {
  decide(item: Item, policy: Policy): Promise<EndpointDecision>;
}

/** Options of {@link SageMakerDecisionEndpoint}. */
export interface EndpointClientOptions {
  /** Per-call timeout. @default 30000 (SageMaker real-time allows 60 s) */
  readonly timeoutMs?: number;
  /** Tries per item. @default 4 */
  readonly attempts?: number;
  /** First backoff; doubles each try, with full jitter. @default 100 */
  readonly baseDelayMs?: number;
}

/** The System One request for one item under one policy. */
export function systemOneRequest(item: Item, policy: Policy): Record<string, unknown> {
  const criteria =
    policy.type === "choice"
      ? Object.fromEntries(policy.options.map((o) => [o.id, o.description]))
      : policy.type === "score"
        ? policy.options.map((o) => o.description)
        : Object.fromEntries(policy.options.map((o) => [o.id, o.description]));
  return {
    state: item.state,
    questions: { decision: { type: policy.type, instructions: policy.question, criteria } },
    layout: policy.layout,
    token_mass: true,
  };
}

interface SystemOneAnswer {
  readonly probabilities?: Record<string, number>;
  readonly x_detail: {
    logits: number[];
    allowed_token_mass: number | null;
    prompt_sha256: string;
    prompt_version: string;
  };
}

/** Decides items on a SageMaker endpoint (or the local runtime behind AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME). */
export class SageMakerDecisionEndpoint implements DecidesItems {
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly baseDelayMs: number;

  constructor(
    private readonly client: SageMakerRuntimeClient,
    readonly endpointName: string,
    options: EndpointClientOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.attempts = options.attempts ?? 4;
    this.baseDelayMs = options.baseDelayMs ?? 100;
  }

  async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    const body = JSON.stringify(systemOneRequest(item, policy));
    let last: Error | undefined;
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      await backoff(attempt, this.baseDelayMs);
      const started = performance.now();
      try {
        const output = await this.client.send(
          new InvokeEndpointCommand({
            EndpointName: this.endpointName,
            ContentType: "application/json",
            Accept: "application/json",
            Body: body,
          }),
          { abortSignal: AbortSignal.timeout(this.timeoutMs) },
        );
        const json = JSON.parse(new TextDecoder().decode(output.Body)) as {
          answers: { decision: SystemOneAnswer };
          x_detail: { model_sha256: string };
        };
        return toDecision(
          json.answers.decision,
          json.x_detail.model_sha256,
          policy,
          performance.now() - started,
        );
      } catch (error) {
        const classified = classify(error, this.endpointName);
        if (!classified.transient) throw classified;
        last = classified;
      }
    }
    throw new EndpointUnavailableError(
      `endpoint ${this.endpointName} failed ${this.attempts} times: ${last?.message}`,
      { cause: last },
    );
  }
}

function toDecision(
  answer: SystemOneAnswer,
  modelSha256: string,
  policy: Policy,
  latencyMs: number,
): EndpointDecision {
  const detail = answer.x_detail;
  // noul answers come back true-first; map logits to the policy's option order by id.
  const answerIds =
    policy.type === "noul"
      ? ["true", "false"]
      : policy.type === "score"
        ? policy.options.map((o) => o.id)
        : Object.keys(answer.probabilities ?? {});
  const logits = policy.options.map((option) => {
    const index = answerIds.indexOf(option.id);
    if (index < 0 || detail.logits[index] === undefined)
      throw new EndpointUnavailableError(`endpoint answer lacks option ${option.id}`);
    return detail.logits[index]!;
  });
  return {
    logits,
    allowedTokenMass: detail.allowed_token_mass,
    modelSha256,
    promptSha256: detail.prompt_sha256,
    promptVersion: detail.prompt_version,
    latencyMs,
  };
}

function classify(error: unknown, endpoint: string): EndpointUnavailableError | EndpointRejectedError {
  const e = error as {
    name?: string;
    message?: string;
    OriginalStatusCode?: number;
    OriginalMessage?: string;
    $metadata?: { httpStatusCode?: number };
  };
  if (e.name === "ModelError") {
    const original = e.OriginalStatusCode ?? 500;
    if (original >= 400 && original < 500 && original !== 408 && original !== 429) {
      return new EndpointRejectedError(
        `the model refused the item (${original}): ${e.OriginalMessage ?? e.message}`,
        original,
        { cause: error },
      );
    }
    return new EndpointUnavailableError(`model error ${original} from ${endpoint}`, { cause: error });
  }
  const status = e.$metadata?.httpStatusCode;
  return new EndpointUnavailableError(
    `${e.name ?? "error"}${status ? ` ${status}` : ""} from ${endpoint}: ${e.message ?? String(error)}`,
    { cause: error },
  );
}

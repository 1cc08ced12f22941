/**
 * Batched InvokeEndpoint: the items a decide function asks about within a short window (the
 * records of one SQS batch arrive together, each after its own table read) go to the endpoint in
 * one call, `{"batch": [...]}`, and come back one answer or one error per item. When a whole call
 * fails (a timeout, a 5xx, a container that one item crashes), the remaining tries go one item
 * per call, so one bad item cannot take its neighbours to the dead-letter queue with it; items
 * whose own answer was a transient error (a 5xx) are sent again batched; an item refused with a
 * 4xx is rejected alone; a whole call SageMaker refuses (too large) also falls back to one call
 * per item. Each item gets `attempts` tries in all. An overloaded endpoint (the whole call
 * throttled, or an item's answer `queue_full`, `model_loading`, `deadline_exceeded`) is never
 * tried again here, nor split into more calls: those items fail at once as overloaded and wait
 * in their queue.
 * Bounded so one call fits SageMaker's limits: at most `maxItems` items and `maxBodyBytes`.
 */
import { InvokeEndpointCommand, type SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { backoff } from "../domain/backoff/backoff.ts";
import {
  answerIdsOf,
  malformed,
  readDecisionAnswer,
  systemOneRequest,
} from "../domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../domain/decision-endpoint.ts";
import {
  EndpointOverloadedError,
  EndpointRejectedError,
  EndpointUnavailableError,
} from "../domain/errors.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";
import {
  type EndpointClientOptions,
  parseBody,
  priorityOf,
  SageMakerDecisionEndpoint,
} from "./decision-endpoint.ts";
import { classify, overloadOf } from "./endpoint-errors.ts";

/** Options of {@link BatchingDecisionEndpoint}, all required (the topology's `ENDPOINT_BATCHING`). */
export interface BatchingOptions extends EndpointClientOptions {
  /** Most items per call. */
  readonly maxItems: number;
  /** How long the first item waits for others. */
  readonly windowMs: number;
  /** Largest request body per call (SageMaker real-time: 6 MB; serverless: 4 MB). */
  readonly maxBodyBytes: number;
}

interface Pending {
  readonly item: Item;
  readonly policy: Policy;
  readonly body: string;
  readonly resolve: (decision: EndpointDecision) => void;
  readonly reject: (error: Error) => void;
}

/** Counters for the benchmark and tests: calls made and items sent. */
export interface BatchingStats {
  calls: number;
  items: number;
}

/** Decides items on a SageMaker endpoint, several per call. */
export class BatchingDecisionEndpoint implements DecidesItems {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly single: SageMakerDecisionEndpoint;
  /** One call per item for the tries left after a whole batched call failed. */
  private readonly alone: SageMakerDecisionEndpoint;
  private readonly maxItems: number;
  private readonly windowMs: number;
  private readonly maxBodyBytes: number;
  readonly stats: BatchingStats = { calls: 0, items: 0 };

  constructor(
    private readonly client: SageMakerRuntimeClient,
    readonly endpointName: string,
    /** How calls are timed, tried and filled. */
    readonly settings: BatchingOptions,
  ) {
    this.single = new SageMakerDecisionEndpoint(client, endpointName, settings);
    this.alone = new SageMakerDecisionEndpoint(client, endpointName, {
      ...settings,
      attempts: Math.max(1, settings.attempts - 1),
    });
    this.maxItems = settings.maxItems;
    this.windowMs = settings.windowMs;
    this.maxBodyBytes = settings.maxBodyBytes;
  }

  decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    const body = JSON.stringify(systemOneRequest(item, policy));
    // An item too large to share a call goes alone.
    if (Buffer.byteLength(body) > this.maxBodyBytes / 2) return this.single.decide(item, policy);
    return new Promise((resolve, reject) => {
      this.pending.push({ item, policy, body, resolve, reject });
      if (this.pending.length >= this.maxItems) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.windowMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.splice(0, this.maxItems);
    if (this.pending.length > 0) this.timer = setTimeout(() => this.flush(), 0);
    // Split by body size so each call stays under the limit.
    let call: Pending[] = [];
    let bytes = 20;
    for (const entry of batch) {
      const size = Buffer.byteLength(entry.body) + 1;
      if (call.length > 0 && bytes + size > this.maxBodyBytes) {
        void this.send(call);
        call = [];
        bytes = 20;
      }
      call.push(entry);
      bytes += size;
    }
    if (call.length > 0) void this.send(call);
  }

  private async send(entries: Pending[]): Promise<void> {
    let waiting = entries;
    let last: Error | undefined;
    for (let attempt = 1; attempt <= this.settings.attempts && waiting.length > 0; attempt++) {
      await backoff(attempt, this.settings.baseDelayMs);
      const started = performance.now();
      let results: { status: number; body: unknown }[];
      try {
        this.stats.calls++;
        this.stats.items += waiting.length;
        const output = await this.client.send(
          new InvokeEndpointCommand({
            EndpointName: this.endpointName,
            ContentType: "application/json",
            Accept: "application/json",
            Body: `{"batch":[${waiting.map((e) => e.body).join(",")}]}`,
            ...priorityOf(waiting.map((e) => e.item)),
          }),
          { abortSignal: AbortSignal.timeout(this.settings.timeoutMs) },
        );
        results = readResults(parseBody(output.Body), waiting.length);
      } catch (error) {
        const classified = classify(error, this.endpointName);
        if (classified instanceof EndpointOverloadedError) {
          for (const entry of waiting) entry.reject(classified);
          return;
        }
        if (classified instanceof EndpointRejectedError) {
          // SageMaker refused the call as a whole (too large, say): each item on its own call.
          for (const entry of waiting)
            this.single.decide(entry.item, entry.policy).then(entry.resolve, entry.reject);
          return;
        }
        if (attempt < this.settings.attempts) {
          // The call failed as a whole: the tries left go one item per call, isolating a bad item.
          for (const entry of waiting)
            this.alone.decide(entry.item, entry.policy).then(entry.resolve, entry.reject);
          return;
        }
        last = classified;
        continue;
      }
      const settled = this.settle(waiting, results, performance.now() - started);
      last = settled.last ?? last;
      waiting = settled.again;
    }
    const failure = new EndpointUnavailableError(
      `endpoint ${this.endpointName} failed ${this.settings.attempts} times for a batch: ${last?.message}`,
      { cause: last },
    );
    for (const entry of waiting) entry.reject(failure);
  }

  /**
   * Settles each item of a call by its own answer: decided, overloaded, refused, or (a failure
   * that may pass) returned in `again` for the next try, with the last such failure.
   */
  private settle(
    waiting: readonly Pending[],
    results: readonly { status: number; body: unknown }[],
    latencyMs: number,
  ): { again: Pending[]; last?: Error } {
    const again: Pending[] = [];
    let last: Error | undefined;
    for (const [i, entry] of waiting.entries()) {
      const result = results[i]!;
      const busy = result.status === 200 ? undefined : overloadOf(result.status, result.body);
      try {
        if (result.status === 200) {
          const answer = readDecisionAnswer(result.body, entry.policy.type, answerIdsOf(entry.policy));
          entry.resolve({ ...answer, latencyMs });
        } else if (busy) {
          entry.reject(
            new EndpointOverloadedError(
              `${this.endpointName} is overloaded (${busy}): ${messageOf(result.body)}`,
              busy,
            ),
          );
        } else if (result.status >= 400 && result.status < 500 && result.status !== 408) {
          entry.reject(
            new EndpointRejectedError(
              `the model refused the item (${result.status}): ${messageOf(result.body)}`,
              result.status,
            ),
          );
        } else {
          last = new EndpointUnavailableError(
            `item answer ${result.status} from ${this.endpointName}: ${messageOf(result.body)}`,
          );
          again.push(entry);
        }
      } catch (error) {
        // An answer that breaks the contract is a broken endpoint: fail the item (retried later).
        entry.reject(classify(error, this.endpointName));
      }
    }
    return last ? { again, last } : { again };
  }
}

function readResults(body: unknown, expected: number): { status: number; body: unknown }[] {
  const results = (body as { results?: unknown })?.results;
  if (
    !Array.isArray(results) ||
    results.length !== expected ||
    !results.every(
      (r) => typeof r === "object" && r !== null && Number.isInteger((r as { status?: unknown }).status),
    )
  )
    throw malformed("results", `expected results for ${expected} items of the batch`);
  return results as { status: number; body: unknown }[];
}

function messageOf(body: unknown): string {
  return String((body as { error?: { message?: unknown } })?.error?.message ?? JSON.stringify(body)).slice(
    0,
    300,
  );
}

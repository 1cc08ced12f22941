/**
 * The async lane on memory for unit tests: the submit and result steps sharing in-memory stores
 * and a folder for the bucket, an endpoint stand-in that records the invocations (answering with
 * the output location SageMaker would), and a writer of answer files and notifications that does
 * what the container does (one answer per request line, with the identity it echoes) or what a
 * test makes of those lines.
 */
import { createHash } from "node:crypto";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryAsyncObjectStore } from "../../shared/adapters/in-memory/in-memory-async-objects.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { asyncNotificationBody } from "../../shared/domain/async/async-notification.ts";
import { type AsyncInvocation, keyOfLocation } from "../../shared/domain/async/async-objects.ts";
import type { SystemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import type { DecidesItems } from "../../shared/domain/decision-endpoint.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import type { ResultDependencies } from "../../shared/use-cases/async/async-results.ts";
import {
  type QueuedItem,
  type SubmitDependencies,
  submitItems,
} from "../../shared/use-cases/async/async-submit.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { objectText } from "./object-text.ts";
import { TEAMS_POLICY } from "./policies.ts";
import { answerFor } from "./system-one-answers.ts";

/** The bucket name in the lane's `s3://` locations. */
export const BUCKET = "pipeline-bucket";

/** A queue that keeps what is sent to it. */
export function memoryQueue(url: string): MessageQueue & { sent: string[] } {
  const sent: string[] = [];
  return {
    url,
    sent,
    send: async (body: string) => {
      sent.push(body);
      return `${url}-${sent.length}`;
    },
  } as unknown as MessageQueue & { sent: string[] };
}

/** The output key SageMaker (and the local stand-in) writes an invocation's answers to. */
export const outputKeyOf = (inferenceId: string) => `async/output/results/${inferenceId}.out`;

/** The answer line the container writes for a request line: `body` with the identity it echoes. */
export function answerLine(request: string, body: unknown, status = 200): string {
  const { x_item } = JSON.parse(request) as { x_item?: unknown };
  const x_request_sha256 = createHash("sha256").update(request, "utf8").digest("hex");
  return JSON.stringify({ status, body, x_item, x_request_sha256 });
}

/**
 * The logits an item is answered with: `[10, k / 10]` for the item named `ticket i<k>` in its
 * state, so that a record's raw logits tell whose answer decided it; `[3, 0]` for any other.
 */
export function logitsOf(request: string): [number, number] {
  const k = /ticket i(\d+)/.exec(request)?.[1];
  return k === undefined ? [3, 0] : [10, Number(k) / 10];
}

/** The container's honest answer line to a request line (an answer of its own item, by {@link logitsOf}). */
export const honestAnswer = (request: string, logits = logitsOf(request)) =>
  answerLine(request, answerFor(JSON.parse(request) as SystemOneRequest, logits));

/** The lane on memory: submit and result dependencies sharing stores, and the invocations made. */
export function memoryLane(
  root: string,
  policies = new PolicyRegistry([TEAMS_POLICY]),
  laterTiers?: DecidesItems,
) {
  const objects = new FsObjectStore(root);
  const records = new InMemoryAsyncObjectStore();
  const store = new InMemoryDecisionStore();
  const events: PipelineEvent[] = [];
  const invocations: AsyncInvocation[] = [];
  const endpoint = {
    invoke: async (invocation: AsyncInvocation) => {
      invocations.push(invocation);
      return {
        inferenceId: invocation.inferenceId,
        outputLocation: `s3://${BUCKET}/${outputKeyOf(invocation.inferenceId)}`,
      };
    },
  };
  const decide = {
    policies,
    store,
    publisher: { publish: async (batch: PipelineEvent[]) => void events.push(...batch) },
    publishLeaseMs: 60_000,
    now: () => new Date(),
  };
  const batch = { queue: memoryQueue("batch"), deadLetters: memoryQueue("batch-dlq") };
  // The live intake's queues, served when the stack runs it on the async endpoint (-c endpointMode=async).
  const intake = { queue: memoryQueue("intake"), deadLetters: memoryQueue("intake-dlq") };
  const results: ResultDependencies = {
    decide,
    ...(laterTiers ? { laterTiers } : {}),
    store,
    objects,
    bucket: BUCKET,
    records,
    endpoint,
    endpointName: "async",
    lanes: { batch, intake },
    maxItemFailures: 2,
    objectAttempts: 3,
    itemConcurrency: 4,
  };
  const submitDeps = {
    policies,
    objects,
    bucket: BUCKET,
    records,
    endpoint,
    endpointName: "async",
    decideWithoutModel: (body: string) =>
      decideMessage(body, {
        ...decide,
        endpoint: {
          decide: () => {
            throw new Error("no model for an item that cannot be parsed");
          },
        },
      }),
    now: () => new Date(),
  };
  const submit = (
    queued: QueuedItem[],
    itemsPerObject = 100,
    deps: Omit<SubmitDependencies, "itemsPerObject"> = submitDeps,
  ) => submitItems(queued, { ...deps, itemsPerObject });
  /**
   * Writes the answers to an invocation's input (the container's honest lines, or what `lines`
   * makes of them given the request lines) under `outputKey`, and returns its notification.
   */
  const answer = async (
    invocation: AsyncInvocation,
    lines?: (honest: string[], requests: string[]) => string[],
    outputKey = outputKeyOf(invocation.inferenceId),
  ) => {
    const text = await objectText(objects, keyOfLocation(invocation.inputLocation, BUCKET));
    const requests = text.trim().split("\n");
    const honest = requests.map((request) => honestAnswer(request));
    const written = lines ? lines(honest, requests) : honest;
    await objects.put(outputKey, `${written.join("\n")}\n`);
    return asyncNotificationBody(
      "async",
      {
        status: "completed",
        inferenceId: invocation.inferenceId,
        inputLocation: invocation.inputLocation,
        outputLocation: `s3://${BUCKET}/${outputKey}`,
      },
      new Date(),
    );
  };
  return {
    submit,
    submitDeps,
    answer,
    results,
    objects,
    records,
    store,
    events,
    invocations,
    batch,
    intake,
  };
}

/** An item of the `tickets` policy: its state names it (`ticket <id>`). */
export const ticketItem = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, policy: "tickets", state: `ticket ${id}`, ...extra });

/** The items as queued messages (`m-<id>`) on `source`. */
export const queuedTickets = (ids: string[], source: QueuedItem["source"] = "batch"): QueuedItem[] =>
  ids.map((id) => ({ messageId: `m-${id}`, body: ticketItem(id), source }));

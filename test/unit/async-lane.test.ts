/**
 * The async lane's submit and result steps on in-memory stores and a folder for the bucket, with
 * an endpoint stand-in that writes answers without a model: objects per lane and policy version,
 * every item decided once on the decide path, a malformed answer failing its item alone, a failed
 * object tried again and then dead-lettered, stale notifications ignored, the live intake's items
 * (`-c endpointMode=async`) kept on the intake's own queues. The real services run
 * the same steps in test/integration/async-lane.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryAsyncObjectStore } from "../../shared/adapters/in-memory-async-objects.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory-decision-store.ts";
import {
  AsyncNotificationError,
  asyncNotificationBody,
  parseAsyncNotification,
} from "../../shared/domain/async-notification.ts";
import {
  type AsyncInvocation,
  asyncItemsPerObject,
  keyOfLocation,
  objectOfInputKey,
} from "../../shared/domain/async-objects.ts";
import type { SystemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { type ResultDependencies, settleNotification } from "../../shared/use-cases/async-results.ts";
import { type QueuedItem, submitItems } from "../../shared/use-cases/async-submit.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { asyncObjectStoreContract } from "../helpers/async-objects.contract.ts";
import { objectText } from "../helpers/object-text.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";
import { answerFor } from "../helpers/system-one-answers.ts";

asyncObjectStoreContract("in memory", () => new InMemoryAsyncObjectStore());

const BUCKET = "pipeline-bucket";

/** A queue that keeps what is sent to it. */
function memoryQueue(url: string): MessageQueue & { sent: string[] } {
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

/** The lane on memory: submit and result dependencies sharing stores, and the invocations made. */
function lane(root: string, policies = new PolicyRegistry([TEAMS_POLICY])) {
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
        outputLocation: `s3://${BUCKET}/async/output/results/x.out`,
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
  const submit = (queued: QueuedItem[], itemsPerObject = 100) =>
    submitItems(queued, {
      policies,
      objects,
      bucket: BUCKET,
      records,
      endpoint,
      endpointName: "async",
      itemsPerObject,
      decideWithoutModel: (body) =>
        decideMessage(body, {
          ...decide,
          endpoint: {
            decide: () => {
              throw new Error("no model for an item that cannot be parsed");
            },
          },
        }),
      now: () => new Date(),
    });
  /** Writes the answers to an invocation's input (each line's answer, or `line(i)` instead) and its notification. */
  const answer = async (
    invocation: AsyncInvocation,
    line?: (i: number, request: string) => string | undefined,
  ) => {
    const text = await objectText(objects, keyOfLocation(invocation.inputLocation, BUCKET));
    const lines = text
      .trim()
      .split("\n")
      .map((request, i) => {
        const written = line?.(i, request);
        if (written !== undefined) return written;
        return JSON.stringify({
          status: 200,
          body: answerFor(JSON.parse(request) as SystemOneRequest, [3, 0]),
        });
      });
    const outputKey = `async/output/results/${invocation.inferenceId}.out`;
    await objects.put(outputKey, `${lines.join("\n")}\n`);
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
  return { submit, answer, results, records, store, events, invocations, batch, intake };
}

const item = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, policy: "tickets", state: `ticket ${id}`, ...extra });
const queued = (ids: string[], source: QueuedItem["source"] = "batch"): QueuedItem[] =>
  ids.map((id) => ({ messageId: `m-${id}`, body: item(id), source }));

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "async-lane-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("async objects", () => {
  it("sizes an object from the measured seconds per item, within the invocation timeout", () => {
    expect(asyncItemsPerObject(1.546)).toBe(388);
    expect(asyncItemsPerObject(1.546) * 1.546 * 1.5).toBeLessThanOrEqual(3600 / 4);
    expect(asyncItemsPerObject(0.0001)).toBe(10_000);
    expect(asyncItemsPerObject(5000)).toBe(1);
  });

  it("reads the notification SageMaker publishes, raw or in SNS's envelope, and names what is wrong", () => {
    const body = asyncNotificationBody(
      "e",
      { status: "failed", inferenceId: "i", inputLocation: "s3://b/k", reason: "ModelError: boom" },
      new Date(),
    );
    expect(parseAsyncNotification(body)).toEqual({
      status: "failed",
      inferenceId: "i",
      inputLocation: "s3://b/k",
      reason: "ModelError: boom",
    });
    expect(parseAsyncNotification(JSON.stringify({ Type: "Notification", Message: body })).status).toBe(
      "failed",
    );
    expect(() => parseAsyncNotification("{}")).toThrow(AsyncNotificationError);
    expect(() => parseAsyncNotification("not json")).toThrow(/not JSON/);
  });
});

describe("submit, then settle", () => {
  it("groups a policy's items into objects, rejects an unparseable one at once, and never invokes a redelivered group twice", async () => {
    const l = lane(root);
    const messages = [
      ...queued(["a", "b", "c", "d", "e"]),
      { messageId: "m-bad", body: "{not json", source: "batch" as const },
    ];
    const result = await l.submit(messages, 2);
    expect(result.objects.map((o) => o.items)).toEqual([2, 2, 1]);
    expect(result.rejected).toBe(1);
    expect(l.invocations).toHaveLength(3);
    const parts = objectOfInputKey(keyOfLocation(l.invocations[0]!.inputLocation, BUCKET))!;
    expect(parts).toMatchObject({ source: "batch", policyId: "tickets", policyVersion: 1 });
    expect(await l.records.get(parts.objectId)).toMatchObject({
      itemCount: 2,
      attempts: 1,
      state: "submitted",
    });
    const again = await l.submit(messages.slice(0, 2), 2);
    expect(again.objects).toEqual([{ objectId: parts.objectId, items: 2, invoked: false }]);
    expect(l.invocations).toHaveLength(3);
  });

  it("decides every item once with its event, fails a malformed answer's item alone, and decides nothing twice when run again", async () => {
    const l = lane(root);
    await l.submit(queued(["a", "b", "c", "d"]));
    const notification = await l.answer(l.invocations[0]!, (i) =>
      i === 2 ? '{"status": 200, "body": {"answers": {}}}' : undefined,
    );
    const first = await settleNotification(notification, l.results);
    expect(first).toMatchObject({ outcome: "settled", items: { decided: 3, resubmitted: 1 } });
    expect(
      l.events
        .filter((e) => e.detailType === "Decision Made")
        .map((e) => e.detail.itemId)
        .sort(),
    ).toEqual(["a", "b", "d"]);
    expect(l.batch.queue.sent).toEqual([item("c")]);
    const again = await settleNotification(notification, l.results);
    expect(again.items).toMatchObject({ decided: 0, already_decided: 3, dead_lettered: 1 });
    expect(l.batch.deadLetters.sent).toEqual([item("c")]);
    expect(await l.store.failureOf("batch-dlq-1")).toMatchObject({
      reason: expect.stringMatching(/malformed answer/),
    });
    expect(l.events.filter((e) => e.detailType === "Decision Made")).toHaveLength(3);
  });

  it("invokes a failed object again with its attempts counted, ignores stale notifications, then dead-letters its items with the reason", async () => {
    const l = lane(root);
    await l.submit(queued(["a", "b"]));
    const failed = (invocation: AsyncInvocation) =>
      asyncNotificationBody(
        "async",
        {
          status: "failed",
          inferenceId: invocation.inferenceId,
          inputLocation: invocation.inputLocation,
          reason: "ModelError: out of memory",
        },
        new Date(),
      );
    expect((await settleNotification(failed(l.invocations[0]!), l.results)).outcome).toBe("retried");
    expect((await settleNotification(failed(l.invocations[0]!), l.results)).outcome).toBe("stale");
    expect((await settleNotification(failed(l.invocations[1]!), l.results)).outcome).toBe("retried");
    expect(l.invocations.map((i) => i.inferenceId.slice(-3))).toEqual(["-a1", "-a2", "-a3"]);
    const last = await settleNotification(failed(l.invocations[2]!), l.results);
    expect(last).toMatchObject({ outcome: "dead_lettered", items: { dead_lettered: 2 } });
    expect(l.batch.deadLetters.sent).toEqual([item("a"), item("b")]);
    expect(await l.store.failureOf("batch-dlq-2")).toMatchObject({
      reason: expect.stringMatching(/failed 3 times: ModelError: out of memory/),
    });
    expect((await l.records.get(last.objectId))?.state).toBe("dead_lettered");
  });

  it("asks a cascade's later model nothing: an object holds the first model's answers, so what it passes on goes to people", async () => {
    const cascade = parsePolicy({ ...TEAMS_POLICY, cascade: [{ model: "large", autoThreshold: 0.5 }] });
    const l = lane(root, new PolicyRegistry([cascade]));
    await l.submit(queued(["a"]));
    // Unsure: about 0.55 on the first option, below the first model's threshold, above the second's.
    const unsure = (_i: number, request: string) =>
      JSON.stringify({ status: 200, body: answerFor(JSON.parse(request) as SystemOneRequest, [0.2, 0]) });
    await settleNotification(await l.answer(l.invocations[0]!, unsure), l.results);
    const record = await l.store.latest("a", "tickets");
    // Before, the first model's answer was read again as the second model's, which then acted on it.
    expect(record).toMatchObject({ route: "human", reason: "below_threshold" });
    expect(record!.tiers?.length ?? 1).toBe(1);
  });

  it("submits again an item scored under a version that is no longer live, counting no failure", async () => {
    const l = lane(root);
    await l.submit(queued(["a"]));
    const notification = await l.answer(l.invocations[0]!);
    const v2 = parsePolicy({ ...TEAMS_POLICY, version: 2 });
    const later = {
      ...l.results,
      decide: { ...l.results.decide, policies: new PolicyRegistry([TEAMS_POLICY, v2]) },
    };
    expect((await settleNotification(notification, later)).items.resubmitted).toBe(1);
    expect(l.batch.queue.sent).toEqual([item("a")]);
    expect(await l.store.failureOf("async|batch|a")).toBeUndefined();
  });

  it("keeps the live intake's items (-c endpointMode=async) in objects of their own, decided once, retried and dead-lettered on the intake's queues", async () => {
    const l = lane(root);
    await l.submit([...queued(["a", "b"], "intake"), ...queued(["c"])]);
    const sources = l.invocations.map(
      (i) => objectOfInputKey(keyOfLocation(i.inputLocation, BUCKET))!.source,
    );
    expect(sources.sort()).toEqual(["batch", "intake"]);
    const live = l.invocations.find((i) => i.inputLocation.includes("/intake/"))!;
    const notification = await l.answer(live, (i) => (i === 1 ? '{"status": 200}' : undefined));
    expect(await settleNotification(notification, l.results)).toMatchObject({
      items: { decided: 1, resubmitted: 1 },
    });
    expect(l.intake.queue.sent).toEqual([item("b")]);
    expect(await settleNotification(notification, l.results)).toMatchObject({
      items: { decided: 0, already_decided: 1, dead_lettered: 1 },
    });
    expect(l.intake.deadLetters.sent).toEqual([item("b")]);
    expect([...l.batch.queue.sent, ...l.batch.deadLetters.sent]).toEqual([]);
    expect(l.events.filter((e) => e.detailType === "Decision Made").map((e) => e.detail.itemId)).toEqual([
      "a",
    ]);
  });
});

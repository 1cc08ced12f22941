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
import { InMemoryAsyncObjectStore } from "../../shared/adapters/in-memory/in-memory-async-objects.ts";
import {
  AsyncNotificationError,
  asyncNotificationBody,
  parseAsyncNotification,
} from "../../shared/domain/async/async-notification.ts";
import {
  type AsyncInvocation,
  asyncItemsPerObject,
  keyOfLocation,
  objectOfInputKey,
} from "../../shared/domain/async/async-objects.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { settleNotification } from "../../shared/use-cases/async/async-results.ts";
import {
  answerLine,
  BUCKET,
  honestAnswer,
  memoryLane,
  queuedTickets,
  ticketItem,
} from "../helpers/async-lane.ts";
import { asyncObjectStoreContract } from "../helpers/async-objects.contract.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

asyncObjectStoreContract("in memory", () => new InMemoryAsyncObjectStore());

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
    const l = memoryLane(root);
    const messages = [
      ...queuedTickets(["a", "b", "c", "d", "e"]),
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
    const l = memoryLane(root);
    await l.submit(queuedTickets(["a", "b", "c", "d"]));
    const malformed = (lines: string[], requests: string[]) =>
      lines.map((line, i) =>
        requests[i]!.includes("ticket c") ? answerLine(requests[i]!, { answers: {} }) : line,
      );
    const notification = await l.answer(l.invocations[0]!, malformed);
    const first = await settleNotification(notification, l.results);
    expect(first).toMatchObject({ outcome: "settled", items: { decided: 3, resubmitted: 1 } });
    expect(
      l.events
        .filter((e) => e.detailType === "Decision Made")
        .map((e) => e.detail.itemId)
        .sort(),
    ).toEqual(["a", "b", "d"]);
    expect(l.batch.queue.sent).toEqual([ticketItem("c")]);
    // Delivered again once settled: the object is closed, nothing is decided or failed twice.
    const again = await settleNotification(notification, l.results);
    expect(again).toMatchObject({ outcome: "stale", items: { decided: 0, resubmitted: 0 } });
    // The item's second time, in an object of its own, fails it again: dead-lettered.
    await l.submit([{ messageId: "m-c-2", body: l.batch.queue.sent[0]!, source: "batch" }]);
    const second = await settleNotification(await l.answer(l.invocations[1]!, malformed), l.results);
    expect(second.items).toMatchObject({ decided: 0, dead_lettered: 1 });
    expect(l.batch.deadLetters.sent).toEqual([ticketItem("c")]);
    expect(await l.store.failureOf("batch-dlq-1")).toMatchObject({
      reason: expect.stringMatching(/malformed answer/),
    });
    expect(l.events.filter((e) => e.detailType === "Decision Made")).toHaveLength(3);
  });

  it("invokes a failed object again with its attempts counted, ignores stale notifications, then dead-letters its items with the reason", async () => {
    const l = memoryLane(root);
    await l.submit(queuedTickets(["a", "b"]));
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
    expect(l.batch.deadLetters.sent).toEqual([ticketItem("a"), ticketItem("b")]);
    expect(await l.store.failureOf("batch-dlq-2")).toMatchObject({
      reason: expect.stringMatching(/failed 3 times: ModelError: out of memory/),
    });
    expect((await l.records.get(last.objectId))?.state).toBe("dead_lettered");
  });

  it("asks a cascade's later model nothing where no later-tier endpoint is given: what the first passes on goes to people", async () => {
    const cascade = parsePolicy({ ...TEAMS_POLICY, cascade: [{ model: "large", autoThreshold: 0.5 }] });
    const l = memoryLane(root, new PolicyRegistry([cascade]));
    await l.submit(queuedTickets(["a"]));
    // Unsure: about 0.55 on the first option, below the first model's threshold, above the second's.
    const unsure = (_lines: string[], requests: string[]) =>
      requests.map((request) => honestAnswer(request, [0.2, 0]));
    await settleNotification(await l.answer(l.invocations[0]!, unsure), l.results);
    const record = await l.store.latest("a", "tickets");
    // Before, the first model's answer was read again as the second model's, which then acted on it.
    expect(record).toMatchObject({ route: "human", reason: "below_threshold" });
    expect(record!.tiers?.length ?? 1).toBe(1);
  });

  it("submits again an item scored under a version that is no longer live, counting no failure", async () => {
    const l = memoryLane(root);
    await l.submit(queuedTickets(["a"]));
    const notification = await l.answer(l.invocations[0]!);
    const v2 = parsePolicy({ ...TEAMS_POLICY, version: 2 });
    const later = {
      ...l.results,
      decide: { ...l.results.decide, policies: new PolicyRegistry([TEAMS_POLICY, v2]) },
    };
    expect((await settleNotification(notification, later)).items.resubmitted).toBe(1);
    expect(l.batch.queue.sent).toEqual([ticketItem("a")]);
    expect(await l.store.failureOf("async|batch|a")).toBeUndefined();
  });

  it("keeps the live intake's items (-c endpointMode=async) in objects of their own, decided once, retried and dead-lettered on the intake's queues", async () => {
    const l = memoryLane(root);
    await l.submit([...queuedTickets(["a", "b"], "intake"), ...queuedTickets(["c"])]);
    const sources = l.invocations.map(
      (i) => objectOfInputKey(keyOfLocation(i.inputLocation, BUCKET))!.source,
    );
    expect(sources.sort()).toEqual(["batch", "intake"]);
    const live = l.invocations.find((i) => i.inputLocation.includes("/intake/"))!;
    const broken = (lines: string[], requests: string[]) =>
      lines.map((line, i) =>
        requests[i]!.includes("ticket b") ? answerLine(requests[i]!, undefined) : line,
      );
    expect(await settleNotification(await l.answer(live, broken), l.results)).toMatchObject({
      items: { decided: 1, resubmitted: 1 },
    });
    expect(l.intake.queue.sent).toEqual([ticketItem("b")]);
    await l.submit([{ messageId: "m-b-2", body: l.intake.queue.sent[0]!, source: "intake" }]);
    expect(await settleNotification(await l.answer(l.invocations.at(-1)!, broken), l.results)).toMatchObject({
      items: { decided: 0, dead_lettered: 1 },
    });
    expect(l.intake.deadLetters.sent).toEqual([ticketItem("b")]);
    expect([...l.batch.queue.sent, ...l.batch.deadLetters.sent]).toEqual([]);
    expect(l.events.filter((e) => e.detailType === "Decision Made").map((e) => e.detail.itemId)).toEqual([
      "a",
    ]);
  });
});

/**
 * A delivery the decide function could not settle: an overloaded endpoint returns the item to
 * the queue it came from with the backoff of its receive count and counts nothing against it, on
 * any receive short of the queue's own limit; a failure of the item is noted and counted, and at
 * the item-failure limit the item moves to the dead-letter queue its source names (intake or batch
 * lane), counted in its batch, with its reason noted where replay looks it up. Queues are fakes
 * that record calls; the local overload test runs the same path on the real local SQS.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { BatchMember } from "../../shared/domain/batch.ts";
import {
  EndpointOverloadedError,
  EndpointUnavailableError,
  EventOwedError,
} from "../../shared/domain/errors.ts";
import type { MessageQueue, QueueDirectory } from "../../shared/domain/message-queue.ts";
import type { BatchDependencies } from "../../shared/use-cases/batch-progress.ts";
import {
  type Delivery,
  type FailedDeliveryDependencies,
  settleFailedDelivery,
} from "../../shared/use-cases/failed-delivery.ts";

const INTAKE = "arn:aws:sqs:us-east-1:123456789012:intake";
const BATCH = "arn:aws:sqs:us-east-1:123456789012:batch";
const limits = {
  maxItemFailures: 3,
  maxReceiveCount: 100,
  overloadBackoff: { firstSeconds: 30, maxSeconds: 900 },
};
const overloaded = new EndpointOverloadedError("busy", "queue_full");
const failing = new EndpointUnavailableError("model error 500");

/** Queues that record visibility changes and sends; each source names its own dead-letter queue. */
function fakeQueues() {
  const visibility: { arn: string; handle: string; seconds: number }[] = [];
  const sent: { arn: string; body: string }[] = [];
  const queue = (arn: string) =>
    ({
      url: arn,
      changeVisibility: async (handle: string, seconds: number) =>
        void visibility.push({ arn, handle, seconds }),
      send: async (body: string) => {
        sent.push({ arn, body });
        return `dlq-${sent.length}`;
      },
    }) as unknown as MessageQueue;
  const directory: QueueDirectory = {
    queue: async (arn) => queue(arn),
    deadLetterQueueOf: async (arn) => queue(`${arn}-dlq`),
  };
  return { directory, visibility, sent };
}

function setup(extra: Partial<FailedDeliveryDependencies> = {}) {
  const store = new InMemoryDecisionStore();
  const queues = fakeQueues();
  const deps: FailedDeliveryDependencies = {
    store,
    queues: queues.directory,
    limits,
    draw: () => 0,
    ...extra,
  };
  return { store, queues, deps };
}

const delivery = (
  receiveCount: number,
  sourceArn = INTAKE,
  body = '{"id":"A","policy":"tickets"}',
): Delivery => ({
  messageId: "m-1",
  receiptHandle: `h-${receiveCount}`,
  body,
  receiveCount,
  sourceArn,
});

describe("settleFailedDelivery", () => {
  it("returns an overloaded item to its queue with a wait that grows with its receive count, counting nothing", async () => {
    const { store, queues, deps } = setup();
    const outcomes = [];
    for (let receive = 1; receive <= 8; receive++)
      outcomes.push(await settleFailedDelivery(delivery(receive), overloaded, deps));
    expect(outcomes.every((o) => o.outcome === "waiting")).toBe(true);
    expect(queues.visibility.map((v) => v.seconds)).toEqual([15, 30, 60, 120, 240, 450, 450, 450]);
    expect(queues.visibility.every((v) => v.arn === INTAKE)).toBe(true);
    expect(queues.visibility.map((v) => v.handle)).toEqual(Array.from({ length: 8 }, (_, i) => `h-${i + 1}`));
    // Far more overload returns than the item-failure limit, and nothing was noted or dead-lettered.
    expect(await store.failureOf("m-1")).toBeUndefined();
    expect(queues.sent).toEqual([]);
  });

  it("starts the wait at the one the fleet lets the item expect, when the follower's reading gives one", async () => {
    const schedule = { ...limits.overloadBackoff, shortestFirstSeconds: 2 };
    const wait = (seconds: number | undefined) => async () => seconds;
    const seconds = async (expected: number | undefined, receive: number) => {
      const { queues, deps } = setup({
        limits: { ...limits, overloadBackoff: schedule },
        draw: () => 0.999_999,
        expectedWait: wait(expected),
      });
      await settleFailedDelivery(delivery(receive), overloaded, deps);
      return queues.visibility[0]!.seconds;
    };
    // Before: 30 s whatever the fleet. A nearly idle fleet now brings it back in 2 s, a backlog
    // of 4 minutes in about 4 minutes; the wait still doubles per receive, and without a reading
    // the fixed schedule stands.
    expect(await seconds(0, 1)).toBe(2);
    expect(await seconds(240, 1)).toBe(240);
    expect(await seconds(240, 2)).toBe(480);
    expect(await seconds(undefined, 1)).toBe(30);
  });

  it("counts the item's own failures and dead-letters it at the limit, overload in between not counting", async () => {
    const { store, queues, deps } = setup();
    const results = [];
    let receive = 0;
    for (const error of [failing, overloaded, overloaded, failing, overloaded, failing])
      results.push((await settleFailedDelivery(delivery(++receive), error, deps)).outcome);
    expect(results).toEqual(["retrying", "waiting", "waiting", "retrying", "waiting", "dead_lettered"]);
    expect(queues.sent).toEqual([{ arn: `${INTAKE}-dlq`, body: delivery(1).body }]);
    expect((await store.failureOf("m-1"))?.reason).toBe("EndpointUnavailableError: model error 500");
    // Replay reads the reason by the message id in the dead-letter queue.
    expect((await store.failureOf("dlq-1"))?.reason).toMatch(/EndpointUnavailableError/);
  });

  it("never counts an owed event against its item: the item is decided, another write's lease only delays the event", async () => {
    const { store, queues, deps } = setup();
    const owed = new EventOwedError("A");
    const results = [];
    // More owed events than the failure limit, then the item's own failures still count from zero.
    for (let receive = 1; receive <= 2 * limits.maxItemFailures; receive++)
      results.push((await settleFailedDelivery(delivery(receive), owed, deps)).outcome);
    expect(results).toEqual(Array(2 * limits.maxItemFailures).fill("owed"));
    expect(queues.sent).toEqual([]);
    expect(queues.visibility).toEqual([]);
    expect(await store.failureOf("m-1")).toBeUndefined();
    expect((await settleFailedDelivery(delivery(7), failing, deps)).outcome).toBe("retrying");
  });

  it("dead-letters on the queue's own last receive, overloaded or not, before SQS would", async () => {
    const { queues, deps } = setup();
    const outcome = await settleFailedDelivery(delivery(limits.maxReceiveCount), overloaded, deps);
    expect(outcome).toMatchObject({
      outcome: "dead_lettered",
      reason: expect.stringMatching(/receive 100, the queue's limit/),
    });
    expect(queues.visibility).toEqual([]);
    expect(queues.sent).toHaveLength(1);
  });

  it("treats the batch lane the same, dead-lettering into its own source's queue and counting the item in its batch", async () => {
    const members: BatchMember[] = [];
    const batches = {
      batches: {
        recordMember: async (_batchId: string, member: BatchMember) => void members.push(member),
        getBatch: async () => undefined,
      },
    } as unknown as BatchDependencies;
    const { queues, deps } = setup({ batches, limits: { ...limits, maxItemFailures: 1 } });
    const body = '{"id":"B-1","policy":"tickets","batchId":"b-test-000001","state":"x"}';
    expect((await settleFailedDelivery(delivery(1, BATCH, body), overloaded, deps)).outcome).toBe("waiting");
    expect(queues.visibility[0]!.arn).toBe(BATCH);
    expect((await settleFailedDelivery(delivery(2, BATCH, body), failing, deps)).outcome).toBe(
      "dead_lettered",
    );
    expect(queues.sent).toEqual([{ arn: `${BATCH}-dlq`, body }]);
    expect(members).toMatchObject([{ itemId: "B-1", state: "dead_lettered" }]);
  });

  it("keeps retrying an item whose queue has no dead-letter queue", async () => {
    const { queues, deps } = setup({ limits: { ...limits, maxItemFailures: 1 } });
    const noDlq = { ...queues.directory, deadLetterQueueOf: async () => undefined };
    expect((await settleFailedDelivery(delivery(1), failing, { ...deps, queues: noDlq })).outcome).toBe(
      "retrying",
    );
  });
});

/**
 * The submit step's hold-back (issue 41): it never hands SageMaker more than the async endpoint
 * answers within the request TTL (6 h, over the sizing margin: 4 h) at its maximum instance count.
 * An object that would pass that is reported back (its messages come again) and submitted once
 * the open backlog has drained; a backlog it cannot read holds nothing back and says so.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MEASURED_SECONDS_PER_ITEM } from "../../shared/domain/topology.ts";
import { backlogCapacity } from "../../shared/use-cases/async/async-submit.ts";
import { memoryLane, queuedTickets } from "../helpers/async-lane.ts";
import { openObject } from "../helpers/async-objects.contract.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "async-hold-back-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("the submit step's hold-back", () => {
  it("counts what the endpoint answers within the TTL over the margin at its maximum instances", () => {
    // 21,600 s / 1.5 = 14,400 s; 4 instances at the measured seconds per fresh item (measured-times.json).
    expect(backlogCapacity({ maxInstances: 4 })).toBe(
      Math.floor((14_400 * 4) / MEASURED_SECONDS_PER_ITEM.fresh),
    );
    expect(backlogCapacity({ maxInstances: 1, secondsPerItem: 1440 })).toBe(10);
    expect(backlogCapacity(undefined)).toBeUndefined();
  });

  it("holds an object back while the open backlog fills the budget, and submits it once the backlog drains", async () => {
    const l = memoryLane(root);
    // The endpoint answers 10 items in the budget: 9 are open.
    const holdBack = { maxInstances: 1, secondsPerItem: 1440 };
    const open = openObject(1, { itemCount: 9 });
    await l.records.create(open);
    const messages = queuedTickets(["a", "b", "c", "d"]);
    const first = await l.submit(messages, 2, { ...l.submitDeps, holdBack });
    expect(first.objects).toEqual([]);
    expect(first.failed.map((f) => f.messageId)).toEqual(messages.map((m) => m.messageId));
    expect(first.failed[0]!.reason).toMatch(/held back: 9 items open, the endpoint answers 10/);
    expect(l.invocations).toHaveLength(0);
    // The open object settles: the messages, back from the queue, go in as far as the budget allows.
    await l.records.close(open.objectId, "settled");
    const again = await l.submit(messages, 2, { ...l.submitDeps, holdBack });
    expect(again.objects.map((o) => o.items)).toEqual([2, 2]);
    expect(again.failed).toEqual([]);
    expect(l.invocations).toHaveLength(2);
  });

  it("submits one object past the budget when nothing is open (an object is never held for ever), and holds the next", async () => {
    const l = memoryLane(root);
    const holdBack = { maxInstances: 1, secondsPerItem: 1440 };
    const result = await l.submit(queuedTickets(Array.from({ length: 24 }, (_, i) => `x${i}`)), 12, {
      ...l.submitDeps,
      holdBack,
    });
    expect(result.objects.map((o) => o.items)).toEqual([12]);
    expect(result.failed).toHaveLength(12);
  });

  it("holds nothing back and says why when the open objects cannot be read", async () => {
    const l = memoryLane(root);
    const records = Object.assign(Object.create(l.records), {
      open: async () => {
        throw new Error("AccessDenied: dynamodb:Query");
      },
    });
    const result = await l.submit(queuedTickets(["a"]), 2, {
      ...l.submitDeps,
      records,
      holdBack: { maxInstances: 1, secondsPerItem: 1440 },
    });
    expect(result.objects).toHaveLength(1);
    expect(result.holdBackUnread).toMatch(/AccessDenied/);
  });
});

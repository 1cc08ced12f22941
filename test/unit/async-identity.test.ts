/**
 * The async lane decides each item by its identity, never by its position (issue 41): answer files
 * altered (lines swapped, reversed, missing, extra, duplicated, naming a foreign item or another
 * request), notifications that name a file outside the output prefix or an attempt never made, a
 * notification before its record, and a queued body printed over several lines. Each item is
 * answered with logits of its own (`logitsOf`): no item may ever be decided with another's, and
 * each item whose answer is not its own ends retried (then dead-lettered) with the reason.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asyncNotificationBody } from "../../shared/domain/async/async-notification.ts";
import type { AsyncObject, AsyncObjectStore } from "../../shared/domain/async/async-objects.ts";
import {
  InvocationNotRecordedError,
  settleNotification,
} from "../../shared/use-cases/async/async-results.ts";
import {
  BUCKET,
  honestAnswer,
  memoryLane,
  outputKeyOf,
  queuedTickets,
  ticketItem,
} from "../helpers/async-lane.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "async-identity-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const IDS = ["i0", "i1", "i2", "i3", "i4", "i5"];

/** Submits the six items as one object; the lane and its one invocation. */
async function submitted() {
  const l = memoryLane(root);
  await l.submit(queuedTickets(IDS));
  return { l, invocation: l.invocations[0]! };
}

/**
 * What became of each item: every decided one must hold its own answer (`[10, k/10]` for `i<k>`);
 * returns the decided ids and the ids sent back to the lane's queue.
 */
async function outcome(l: ReturnType<typeof memoryLane>) {
  const decided: string[] = [];
  for (const id of IDS) {
    const record = await l.store.latest(id, "tickets");
    if (!record) continue;
    expect(record.rawLogits, `${id} decided with another item's answer`).toEqual([
      10,
      Number(id.slice(1)) / 10,
    ]);
    decided.push(id);
  }
  const retried = l.batch.queue.sent.map((body) => (JSON.parse(body) as { id: string }).id);
  return { decided, retried };
}

/** The reason the failure of item `id` was counted with. */
const reasonOf = async (l: ReturnType<typeof memoryLane>, id: string) =>
  (await l.store.failureOf(`async|batch|${id}`))?.reason;

describe("answers matched to their items by identity", () => {
  it("decides every item with its own answer when the lines are swapped or reversed", async () => {
    for (const alter of [
      (lines: string[]) => [lines[1]!, lines[0]!, ...lines.slice(2)],
      (lines: string[]) => [...lines].reverse(),
    ]) {
      const { l, invocation } = await submitted();
      const result = await settleNotification(await l.answer(invocation, alter), l.results);
      expect(result).toMatchObject({ outcome: "settled", items: { decided: 6, resubmitted: 0 } });
      expect((await outcome(l)).decided).toEqual(IDS);
    }
  });

  it("fails alone an item whose line is missing, and ignores an extra line of a foreign item", async () => {
    const { l, invocation } = await submitted();
    const result = await settleNotification(
      await l.answer(invocation, (lines, requests) => [
        foreignAnswer(requests[0]!),
        ...lines.filter((_, i) => i !== 2),
      ]),
      l.results,
    );
    expect(result).toMatchObject({ items: { decided: 5, resubmitted: 1 }, answers: { lines: 6, items: 6 } });
    expect(await outcome(l)).toEqual({ decided: ["i0", "i1", "i3", "i4", "i5"], retried: ["i2"] });
    expect(await reasonOf(l, "i2")).toMatch(/no answer line for this item/);
  });

  it("fails an item whose line is replaced by a foreign item's answer", async () => {
    const { l, invocation } = await submitted();
    await settleNotification(
      await l.answer(invocation, (lines, requests) =>
        lines.map((line, i) => (i === 1 ? foreignAnswer(requests[0]!) : line)),
      ),
      l.results,
    );
    expect(await outcome(l)).toEqual({ decided: ["i0", "i2", "i3", "i4", "i5"], retried: ["i1"] });
    expect(await reasonOf(l, "i1")).toMatch(/no answer line for this item/);
  });

  it("fails an item whose answer names it but answers another prompt (another item's request hash)", async () => {
    const { l, invocation } = await submitted();
    await settleNotification(
      await l.answer(invocation, (lines, requests) =>
        lines.map((line, i) => {
          if (i !== 1) return line;
          // i1's identity on the answer to i2's request: the hash is i2's, the logits i2's.
          const forged = JSON.parse(honestAnswer(requests[2]!)) as Record<string, unknown>;
          return JSON.stringify({ ...forged, x_item: { id: "i1", n: 1 } });
        }),
      ),
      l.results,
    );
    const { decided, retried } = await outcome(l);
    expect(decided).not.toContain("i1");
    expect(retried).toContain("i1");
    expect(await reasonOf(l, "i1")).toMatch(/another request|names another item|duplicated/);
  });

  it("decides no item when every line is one item's answer: that one is duplicated, the rest missing", async () => {
    const { l, invocation } = await submitted();
    const result = await settleNotification(
      await l.answer(invocation, (lines) => lines.map(() => lines[0]!)),
      l.results,
    );
    expect(result.items).toMatchObject({ decided: 0, resubmitted: 6 });
    expect(await outcome(l)).toEqual({ decided: [], retried: IDS });
    expect(await reasonOf(l, "i0")).toMatch(/duplicated/);
    expect(await reasonOf(l, "i3")).toMatch(/no answer line/);
  });

  it("dead-letters an item whose answer keeps missing, with the reason, and leaves the others decided", async () => {
    const { l, invocation } = await submitted();
    const withoutI4 = (lines: string[], requests: string[]) =>
      lines.filter((_, i) => !requests[i]!.includes("ticket i4"));
    await settleNotification(await l.answer(invocation, withoutI4), l.results);
    await l.submit([{ messageId: "m-i4-2", body: l.batch.queue.sent[0]!, source: "batch" }]);
    const again = await settleNotification(await l.answer(l.invocations[1]!, withoutI4), l.results);
    expect(again.items).toMatchObject({ dead_lettered: 1 });
    expect(l.batch.deadLetters.sent).toEqual([ticketItem("i4")]);
    expect(await l.store.failureOf("batch-dlq-1")).toMatchObject({
      reason: expect.stringMatching(/no answer line for this item.*failure 2 of the item/),
    });
    expect((await outcome(l)).decided).toEqual(["i0", "i1", "i2", "i3", "i5"]);
  });
});

describe("notifications settle only an invocation the lane made, from where it was told", () => {
  it("refuses a notification naming a file outside the output prefix, or another file than the one recorded", async () => {
    const { l, invocation } = await submitted();
    const reversed = (lines: string[]) => [...lines].reverse();
    for (const key of ["elsewhere/answers.out", "async/output/results/other.out"]) {
      const refused = await settleNotification(await l.answer(invocation, reversed, key), l.results);
      expect(refused).toMatchObject({ outcome: "refused", reason: expect.stringContaining(key) });
    }
    expect((await outcome(l)).decided).toEqual([]);
    // The invocation's own notification still settles it.
    expect((await settleNotification(await l.answer(invocation), l.results)).outcome).toBe("settled");
    expect((await outcome(l)).decided).toEqual(IDS);
  });

  it("settles nothing for an attempt never made, nor for an inference id of another object", async () => {
    const { l, invocation } = await submitted();
    const never = { ...invocation, inferenceId: invocation.inferenceId.replace(/-a1$/, "-a2") };
    const reversed = (lines: string[]) => [...lines].reverse();
    await expect(settleNotification(await l.answer(never, reversed), l.results)).rejects.toThrow(
      InvocationNotRecordedError,
    );
    const foreign = { ...invocation, inferenceId: "o-000000000000000000000000-a1" };
    expect(await settleNotification(await l.answer(foreign, reversed), l.results)).toMatchObject({
      outcome: "refused",
    });
    expect((await outcome(l)).decided).toEqual([]);
    expect((await l.records.get(l.invocations[0]!.inputLocation.match(/(o-[0-9a-f]{24})/)![1]!))?.state).toBe(
      "submitted",
    );
  });

  it("sends back a notification that comes before its record, and settles it once the record is written", async () => {
    const l = memoryLane(root);
    let held: AsyncObject | undefined;
    const records: AsyncObjectStore = Object.assign(Object.create(l.records) as AsyncObjectStore, {
      create: async (object: AsyncObject) => {
        held = object;
        return true;
      },
    });
    await l.submit(queuedTickets(IDS), 100, { ...l.submitDeps, records });
    const notification = await l.answer(l.invocations[0]!);
    await expect(settleNotification(notification, l.results)).rejects.toThrow(
      /no record .* comes back later/,
    );
    expect((await outcome(l)).decided).toEqual([]);
    await l.records.create(held!);
    expect((await settleNotification(notification, l.results)).outcome).toBe("settled");
    expect((await outcome(l)).decided).toEqual(IDS);
  });

  it("settles a retried object only from the retry's recorded output, and refuses the first attempt's", async () => {
    const { l, invocation } = await submitted();
    const failed = asyncNotificationBody(
      "async",
      {
        status: "failed",
        inferenceId: invocation.inferenceId,
        inputLocation: invocation.inputLocation,
        reason: "boom",
      },
      new Date(),
    );
    expect((await settleNotification(failed, l.results)).outcome).toBe("retried");
    const retry = l.invocations[1]!;
    const record = (await l.records.get(retry.inferenceId.replace(/-a2$/, "")))!;
    expect(record).toMatchObject({
      attempts: 2,
      inferenceId: retry.inferenceId,
      outputLocation: `s3://${BUCKET}/${outputKeyOf(retry.inferenceId)}`,
    });
    expect((await settleNotification(await l.answer(invocation), l.results)).outcome).toBe("stale");
    expect((await settleNotification(await l.answer(retry), l.results)).outcome).toBe("settled");
    expect((await outcome(l)).decided).toEqual(IDS);
  });
});

describe("items written one per line", () => {
  it("decides a queued body printed over several lines as one item, and every other item with its own answer", async () => {
    const l = memoryLane(root);
    const messages = queuedTickets(IDS);
    messages[2] = { ...messages[2]!, body: JSON.stringify(JSON.parse(messages[2]!.body), null, 2) };
    expect(messages[2].body.split("\n").length).toBeGreaterThan(3);
    const submittedNow = await l.submit(messages);
    expect(submittedNow).toMatchObject({ rejected: 0, objects: [{ items: 6 }] });
    const result = await settleNotification(await l.answer(l.invocations[0]!), l.results);
    expect(result).toMatchObject({ items: { decided: 6, rejected: 0, resubmitted: 0 } });
    expect(await outcome(l)).toEqual({ decided: IDS, retried: [] });
  });
});

/** An answer line of an item this object does not hold (`zz`), built on one of its request lines. */
function foreignAnswer(request: string): string {
  const other = {
    ...(JSON.parse(request) as Record<string, unknown>),
    x_item: { id: "zz", n: 0 },
    state: "ticket i9",
  };
  return honestAnswer(JSON.stringify(other));
}

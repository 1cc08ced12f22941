/**
 * The local SQS and bus keep what they accepted across a restart (issue 36, observation 4): the
 * stand-in's queues lived in memory, so a stop lost every message not yet consumed. Here a second
 * server opens the journal while the first still runs, never closed: what it finds is what a
 * SIGKILL would have left.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type BusEvent, startEventBus } from "../../infra/local/event-bus.ts";
import { redriveTo } from "../../infra/local/local-queues.ts";
import { type LocalSqs, startLocalSqs } from "../../infra/local/sqs/sqs-server.ts";
import { eventBridgeClient, localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { EventPublisher } from "../../shared/adapters/event-publisher.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { DetailType, pipelineEvent } from "../../shared/domain/events.ts";
import { EVENT_PUBLISHING, RULES } from "../../shared/domain/topology.ts";

async function queuesOn(local: LocalSqs) {
  const sqs = sqsClient(localServiceOptions(local.endpoint));
  const deadLetters = await SqsQueue.create(sqs, "q-dlq");
  // One receive, then a dead letter, once the second of visibility has passed.
  const redriven = await SqsQueue.create(sqs, "q", { VisibilityTimeout: "1", ...redriveTo("q-dlq", 1) });
  const plain = await SqsQueue.create(sqs, "plain", { VisibilityTimeout: "60" });
  return { sqs, deadLetters, redriven, plain };
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; !(await check()); tries++) {
    if (tries > 600) throw new Error("no change in 60 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("local queues across a restart", () => {
  it("put back every message not deleted, with its id, attributes and first-sent time, in the queue it was in", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "sqs-journal-")), "sqs.jsonl");
    const first = await startLocalSqs({ port: 0, hostname: "127.0.0.1", path });
    const before = await queuesOn(first);
    await before.plain.sendBatch(["A", "B", "C"].map((body) => ({ id: body, body })));
    await before.plain.send("D", { attributes: { ERROR_CODE: "LOCAL_DELIVERY_FAILED" } });
    await before.plain.send("E", { delaySeconds: 600 });
    const received = await before.plain.receive({ max: 10 });
    expect(received.map((m) => m.body).sort()).toEqual(["A", "B", "C", "D"]);
    // A is done; B, C and D are in flight when the process dies; E is still delayed.
    await before.plain.delete([received.find((m) => m.body === "A")!.receiptHandle]);
    const xId = await before.redriven.send("X");
    await before.redriven.receive();
    await until(async () => (await before.deadLetters.depth()).visible === 1);
    before.sqs.destroy();

    // The first server is never closed: the second reads what a SIGKILL would have left.
    const second = await startLocalSqs({ port: 0, hostname: "127.0.0.1", path });
    try {
      expect(second.recovered).toEqual({ plain: 4, "q-dlq": 1 });
      const after = await queuesOn(second);
      const again = await after.plain.receive({ max: 10 });
      expect(again.map((m) => m.body).sort()).toEqual(["B", "C", "D"]);
      for (const message of again) {
        const original = received.find((m) => m.body === message.body)!;
        expect(message.messageId).toBe(original.messageId);
        expect(message.sentAt).toBe(original.sentAt);
      }
      expect(again.find((m) => m.body === "D")?.attributes).toMatchObject({
        ERROR_CODE: "LOCAL_DELIVERY_FAILED",
      });
      expect(await after.plain.receive({ max: 10 })).toEqual([]); // E waits out its delay
      // The dead letter stays a dead letter; its source queue is empty.
      const [letter] = await after.deadLetters.receive();
      expect([letter?.messageId, letter?.body]).toEqual([xId, "X"]);
      expect((await after.redriven.depth()).visible).toBe(0);
      // Deleted now, gone on the next start too.
      await after.plain.delete(again.map((m) => m.receiptHandle));
      after.sqs.destroy();
      const third = await startLocalSqs({ port: 0, hostname: "127.0.0.1", path });
      expect(third.recovered).toEqual({ plain: 1, "q-dlq": 1 });
      await third.close();
    } finally {
      await second.close();
      await first.close();
    }
  }, 120_000);

  it("the bus delivers after a restart what it had accepted and not delivered, and nothing it had", async () => {
    const journal = join(await mkdtemp(join(tmpdir(), "bus-journal-")), "bus.jsonl");
    const first = await startEventBus({ name: "decisions", deliveryAttempts: 1, journal });
    const delivered: BusEvent[] = [];
    let reachable = false;
    first.addRule({
      name: "human",
      pattern: RULES.human.pattern,
      target: async (event) => {
        if (!reachable) throw new Error("the review queue is unreachable");
        delivered.push(event);
      },
      // Its dead-letter queue is down too: the event has nowhere to go yet.
      deadLetter: async () => {
        throw new Error("the dead-letter queue is unreachable");
      },
    });
    const publisher = new EventPublisher(
      eventBridgeClient(localServiceOptions(first.endpoint)),
      first.name,
      EVENT_PUBLISHING,
    );
    const made = (itemId: string) =>
      pipelineEvent(DetailType.made, `made|${itemId}`, { itemId, route: "human" });
    await publisher.publish([made("lost-before")]);
    await first.idle();
    reachable = true;
    await publisher.publish([made("delivered-before")]);
    await first.idle();
    expect(delivered.map((e) => e.detail.itemId)).toEqual(["delivered-before"]);

    const second = await startEventBus({ name: "decisions", journal });
    const after: BusEvent[] = [];
    second.addRule({ name: "human", pattern: RULES.human.pattern, target: async (e) => void after.push(e) });
    expect(second.recover()).toBe(1);
    await second.idle();
    expect(after.map((e) => e.detail.itemId)).toEqual(["lost-before"]);
    await second.stop();
    const third = await startEventBus({ name: "decisions", journal });
    expect(third.recover()).toBe(0);
    await third.stop();
    await first.stop();
  }, 60_000);
});

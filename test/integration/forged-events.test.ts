/**
 * A forged "Decision Made" three ways, on the local pipeline (DynamoDB Local, the local SQS and
 * bus, the deployed targets' functions): put on the bus by a producer, left as a letter in the auto
 * rule's dead-letter queue for `decide replay --from auto-rule`, and left in the auto-action
 * queue's own dead-letter queue for `decide replay --from auto-action`. Each names `remove` for a
 * content-moderation record that chose `allow` (and `remove` is never automated): the bus refuses
 * it, the replay refuses it, and what gets past both is refused at the record. Before the record
 * became the authority, all three actioned `content-moderation:remove`.
 */
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_ACCESS_KEYS } from "../../infra/local/stand-ins.ts";
import { localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import type { DeadLetterRoutes } from "../../shared/domain/dead-letters.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { DetailType, EVENT_SOURCE } from "../../shared/domain/events.ts";
import { eventFor } from "../../shared/use-cases/record-event.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { type LocalPipeline, startLocalPipeline } from "../helpers/local-pipeline.ts";

let pipeline: LocalPipeline;
let routes: DeadLetterRoutes;
/** What an operator's terminal holds: the stand-ins, signed as an operator, not as the pipeline. */
let operator: NodeJS.ProcessEnv;

beforeAll(async () => {
  pipeline = await startLocalPipeline();
  routes = JSON.parse(pipeline.env.DEAD_LETTER_ROUTES!) as DeadLetterRoutes;
  operator = { ...pipeline.env, AWS_ACCESS_KEY_ID: LOCAL_ACCESS_KEYS.operator };
}, 180_000);

afterAll(async () => {
  await pipeline?.stop();
});

/** An automated content-moderation decision to allow the post, as the decide path stores it. */
async function allowedRecord(itemId: string): Promise<DecisionRecord> {
  const now = new Date().toISOString();
  const record: DecisionRecord = {
    itemId,
    policyId: "content-moderation",
    policyVersion: 1,
    status: "auto_approved",
    route: "auto",
    reason: "confident",
    chosen: "allow",
    distribution: { allow: 0.94, restrict: 0.03, remove: 0.02, out_of_scope: 0.01 },
    topProbability: 0.94,
    confidence: 0.92,
    modelSha256: "a".repeat(64),
    promptSha256: "b".repeat(64),
    createdAt: now,
    updatedAt: now,
    eventPublished: true,
  };
  await pipeline.deps.store.create(record);
  return record;
}

/** The record's genuine event as the bus delivers it, and the same event naming `remove`. */
function envelopes(record: DecisionRecord) {
  const genuine = eventFor(record).detail;
  const envelope = (detail: Record<string, unknown>) =>
    JSON.stringify({
      version: "0",
      id: crypto.randomUUID(),
      "detail-type": DetailType.made,
      source: EVENT_SOURCE,
      account: "123456789012",
      time: new Date().toISOString(),
      region: "us-east-1",
      resources: [],
      detail,
    });
  return { genuine: envelope(genuine), forged: envelope({ ...genuine, chosen: "remove" }) };
}

/** Puts one entry signed with `accessKeyId`; the per-entry error code, if any. */
async function putAs(accessKeyId: string, source: string, detail: Record<string, unknown>) {
  const client = new EventBridgeClient({
    ...localServiceOptions(pipeline.bus.endpoint),
    credentials: { accessKeyId, secretAccessKey: "local" },
  });
  const result = await client.send(
    new PutEventsCommand({
      Entries: [
        {
          EventBusName: pipeline.bus.name,
          Source: source,
          DetailType: DetailType.made,
          Detail: JSON.stringify(detail),
        },
      ],
    }),
  );
  client.destroy();
  return result.Entries?.[0]?.ErrorCode;
}

/** Waits (on progress, not a deadline) until the targets have seen `count` events for `itemId`. */
async function seen(itemId: string, count: number): Promise<void> {
  const total = () =>
    (pipeline.effects.actioned.get(itemId) ?? 0) + (pipeline.effects.refused.get(itemId) ?? 0);
  for (let polls = 0; total() < count; polls++) {
    if (polls > 2_400) throw new Error(`${itemId}: ${total()} of ${count} events handled after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const queueAt = (url: string) =>
  new SqsQueue(sqsClient(localServiceOptions(pipeline.env.AWS_ENDPOINT_URL_SQS!)), url);
const action = async (record: DecisionRecord) => (await pipeline.deps.store.get(record))?.action;

describe("a forged Decision Made", () => {
  it("is refused at the bus when a producer puts it, and at the record when it gets past", async () => {
    const record = await allowedRecord("forged-bus");
    const { forged } = envelopes(record);
    const detail = JSON.parse(forged).detail as Record<string, unknown>;
    expect(await putAs(LOCAL_ACCESS_KEYS.operator, EVENT_SOURCE, detail)).toBe(
      "NotAuthorizedForSourceException",
    );
    expect(await putAs(LOCAL_ACCESS_KEYS.operator, "shop.orders", detail)).toBe(
      "NotAuthorizedForDetailTypeException",
    );
    // Past the bus (as if a pipeline role were misused): the auto-action checks the record.
    expect(await putAs(LOCAL_ACCESS_KEYS.pipeline, EVENT_SOURCE, detail)).toBeUndefined();
    await seen(record.itemId, 1);
    expect(pipeline.effects.refused.get(record.itemId)).toBe(1);
    expect(await action(record)).toBeUndefined();
    const stored = await pipeline.deps.store.get(record);
    expect(stored).toMatchObject({ status: "auto_approved", chosen: "allow" });
  });

  it("is refused by a replay of the auto rule's dead letters, which delivers the genuine one", async () => {
    const record = await allowedRecord("forged-rule-letter");
    const { genuine, forged } = envelopes(record);
    const dlq = queueAt(routes["auto-rule"]!.dlqUrl);
    await dlq.send(forged);
    const refused = await runDecide(
      ["replay", "--from", "auto-rule", "--policy", "content-moderation"],
      operator,
    );
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/could not send .* home: not the event its record stands for/);
    expect(refused.stdout.trim().split("\n").at(-1)).toBe(
      "1 matched, 0 moved, 1 left in the dead-letter queue",
    );
    expect(await action(record)).toBeUndefined();
    // The letter stays for an operator to look at; the genuine letter goes and is applied, once.
    const [left] = await dlq.receive({ visibilitySeconds: 30 });
    await dlq.delete([left!.receiptHandle]);
    await dlq.send(genuine);
    const moved = await runDecide(
      ["replay", "--from", "auto-rule", "--policy", "content-moderation"],
      operator,
    );
    expect(moved.stdout.trim().split("\n").at(-1)).toBe(
      "1 matched, 1 moved, 0 left in the dead-letter queue",
    );
    await seen(record.itemId, 1);
    expect(await action(record)).toBe("content-moderation:allow");
  });

  it("put back from the auto-action queue's dead letters is refused at the record", async () => {
    const record = await allowedRecord("forged-target-letter");
    const { forged } = envelopes(record);
    await queueAt(routes["auto-action"]!.dlqUrl).send(forged);
    const moved = await runDecide(
      ["replay", "--from", "auto-action", "--policy", "content-moderation"],
      operator,
    );
    expect(moved.stdout.trim().split("\n").at(-1)).toBe(
      "1 matched, 1 moved, 0 left in the dead-letter queue",
    );
    await seen(record.itemId, 1);
    expect(pipeline.effects.refused.get(record.itemId)).toBe(1);
    expect(await action(record)).toBeUndefined();
    const announced = pipeline.bus.events.filter(
      (e) =>
        e["detail-type"] === DetailType.actioned &&
        (e.detail as { itemId?: string }).itemId === record.itemId,
    );
    expect(announced).toEqual([]);
  });
});

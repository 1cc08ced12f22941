/**
 * The sample consumer in `events/consumers/once-by-event-id.ts` on DynamoDB Local: a "Decision
 * Made" delivered twice (once as a resend with a new envelope id, as after a failed "mark
 * published"), and five times at once, is applied once; a failed effect gives its claim back so
 * the redelivery applies it; a claim whose worker died is taken over after its lease.
 */
import { CreateTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EventInProgressError,
  onceByEventId,
  type PipelineEventEnvelope,
  sqsHandler,
} from "../../events/consumers/once-by-event-id.ts";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { freePort } from "../helpers/local-pipeline.ts";

let dynamo: LocalDynamoDb;
let client: DynamoDBClient;
const table = "seen-events";

beforeAll(async () => {
  dynamo = await startDynamoDbLocal({ port: await freePort() });
  client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  await client.send(
    new CreateTableCommand({
      TableName: table,
      AttributeDefinitions: [{ AttributeName: "eventId", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "eventId", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
});
afterAll(async () => {
  client?.destroy();
  await dynamo?.stop();
});

/** "Decision Made" as an SQS target gets it; `envelope` differs on every send, `eventId` does not. */
const made = (eventId: string, envelope: string): PipelineEventEnvelope & { id: string } => ({
  id: envelope,
  "detail-type": "Decision Made",
  detail: { eventId, itemId: "TICKET-1", route: "auto", chosen: "billing" },
});

describe("a consumer that applies each event once by detail.eventId", () => {
  it("applies a resent event once, and five simultaneous deliveries once", async () => {
    const applied: string[] = [];
    const consume = onceByEventId(client, async (e) => void applied.push(e.detail.eventId), { table });
    expect(await consume(made("ev-1", "envelope-a"))).toBe("applied");
    expect(await consume(made("ev-1", "envelope-b"))).toBe("duplicate");
    const racing = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => consume(made("ev-2", `e${i}`))),
    );
    const outcomes = racing.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).name));
    expect(outcomes.filter((o) => o === "applied")).toHaveLength(1);
    // The others saw it done, or in progress (they go back to the queue and then see it done).
    expect(outcomes.every((o) => ["applied", "duplicate", "EventInProgressError"].includes(o))).toBe(true);
    expect(applied).toEqual(["ev-1", "ev-2"]);
    expect(await consume(made("ev-2", "later"))).toBe("duplicate");
  });

  it("gives the claim back when the effect fails, so the redelivery applies it", async () => {
    let fail = true;
    const applied: string[] = [];
    const consume = onceByEventId(
      client,
      async (e) => {
        if (fail) throw new Error("downstream is down");
        applied.push(e.detail.eventId);
      },
      { table },
    );
    const handler = sqsHandler(consume);
    const records = { Records: [{ messageId: "m-1", body: JSON.stringify(made("ev-3", "x")) }] };
    expect(await handler(records)).toEqual({ batchItemFailures: [{ itemIdentifier: "m-1" }] });
    fail = false;
    expect(await handler(records)).toEqual({ batchItemFailures: [] });
    expect(await handler(records)).toEqual({ batchItemFailures: [] });
    expect(applied).toEqual(["ev-3"]);
  });

  it("takes over a claim whose worker died once its lease has run out", async () => {
    let clock = 1_000_000;
    const applied: string[] = [];
    const options = { table, leaseMs: 1000, now: () => clock };
    // A worker that claims and never finishes (it died mid-effect).
    let claimed = () => {};
    const inEffect = new Promise<void>((resolve) => {
      claimed = resolve;
    });
    const dying = onceByEventId(
      client,
      () => {
        claimed();
        return new Promise<void>(() => undefined);
      },
      options,
    );
    void dying(made("ev-4", "first"));
    await inEffect;
    const consume = onceByEventId(client, async (e) => void applied.push(e.detail.eventId), options);
    await expect(consume(made("ev-4", "second"))).rejects.toBeInstanceOf(EventInProgressError);
    clock += 1001;
    expect(await consume(made("ev-4", "third"))).toBe("applied");
    expect(applied).toEqual(["ev-4"]);
  });
});

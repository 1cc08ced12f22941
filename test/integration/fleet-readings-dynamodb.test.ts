/**
 * The capacity follower's reading in the decisions table, on DynamoDB Local: written and read
 * back whole, overwritten by the next period, and invisible to the lists the review queue reads.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import { DynamoDbFleetReadings } from "../../shared/adapters/dynamodb/dynamodb-fleet-readings.ts";
import { freePort } from "../helpers/local-pipeline.ts";

let dynamo: LocalDynamoDb;
let client: ReturnType<typeof documentClient>;

beforeAll(async () => {
  dynamo = await startDynamoDbLocal({ port: await freePort() });
  await ensureDecisionsTable(dynamo.endpoint, "readings");
  client = documentClient(localServiceOptions(dynamo.endpoint));
}, 120_000);

afterAll(async () => {
  await dynamo?.stop();
});

describe("the fleet reading on DynamoDB Local", () => {
  it("keeps the latest reading only, and no review list sees it", async () => {
    const readings = new DynamoDbFleetReadings(client, "readings");
    expect(await readings.latest()).toBeUndefined();
    const first = {
      instances: 3,
      desiredInstances: 5,
      visible: 120,
      inFlight: 18,
      secondsPerItem: 1.546,
      at: 1,
    };
    await readings.record(first);
    expect(await readings.latest()).toEqual(first);
    const second = { ...first, instances: 5, visible: 0, at: 61_000 };
    await readings.record(second);
    expect(await readings.latest()).toEqual(second);
    const store = new DynamoDbDecisionStore(client, "readings");
    const page = await store.pageReviewQueue({ policyIds: ["tickets"], limit: 10, countCap: 10 });
    expect(page.total).toBe(0);
  });
});

/**
 * The DynamoDB decision and batch stores on DynamoDB Local against the shared contracts, plus what only the
 * real table shows: states DynamoDB cannot hold as maps are stored as text, and a record the
 * table refuses is a permanent error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { DynamoDbAsyncObjectStore } from "../../shared/adapters/dynamodb/dynamodb-async-objects.ts";
import { DynamoDbBatchStore } from "../../shared/adapters/dynamodb/dynamodb-batch-store.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import { StoreRejectedError } from "../../shared/domain/errors.ts";
import { asyncObjectStoreContract } from "../helpers/async-objects.contract.ts";
import { batchStoreContract } from "../helpers/batch-store.contract.ts";
import { decisionStoreContract, pendingRecord } from "../helpers/decision-store.contract.ts";
import { decisionStoreReviewContract } from "../helpers/decision-store-review.contract.ts";
import { freePort } from "../helpers/local-pipeline.ts";

let dynamo: LocalDynamoDb;
let client: ReturnType<typeof documentClient>;

beforeAll(async () => {
  dynamo = await startDynamoDbLocal({ port: await freePort() });
  await ensureDecisionsTable(dynamo.endpoint, "contract");
  client = documentClient(localServiceOptions(dynamo.endpoint));
}, 120_000);

afterAll(async () => {
  await dynamo?.stop();
});

decisionStoreContract("DynamoDB Local", () => new DynamoDbDecisionStore(client, "contract"));
decisionStoreReviewContract("DynamoDB Local", () => new DynamoDbDecisionStore(client, "contract"));
asyncObjectStoreContract("DynamoDB Local", () => new DynamoDbAsyncObjectStore(client, "contract"));

describe("DynamoDB decision store on the real table", () => {
  it("stores states DynamoDB cannot hold as maps (40 levels deep, empty keys) and reads them back", async () => {
    const store = new DynamoDbDecisionStore(client, "contract");
    let deep: unknown = "bottom";
    for (let i = 0; i < 40; i++) deep = { level: deep };
    const record = pendingRecord({ state: { deep, "": "empty key" }, metadata: { "": 1 } });
    expect((await store.create(record)).created).toBe(true);
    expect((await store.get(record))?.state).toEqual(record.state);
    expect((await store.get(record))?.metadata).toEqual({ "": 1 });
  });

  it("turns a record the table refuses into a permanent StoreRejectedError", async () => {
    const store = new DynamoDbDecisionStore(client, "contract");
    // An item over DynamoDB's 400 KB limit: ValidationException, the same on every retry.
    const record = pendingRecord({ state: "x".repeat(450 * 1024) });
    const error = await store.create(record).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRejectedError);
    expect((error as StoreRejectedError).transient).toBe(false);
  });
});

batchStoreContract("DynamoDB Local", () => ({
  batches: new DynamoDbBatchStore(client, "contract"),
  records: new DynamoDbDecisionStore(client, "contract"),
}));

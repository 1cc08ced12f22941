/**
 * Every read bounded (observation 11 of issue 24), on DynamoDB Local with a few thousand records:
 * the document client is wrapped to count what each call hands back (items, and the entries a
 * query evaluated), and each read of the review queue, the decisions view, the backlog job, the
 * drift check and calibration's reviewed list stays within its page or sample size, far below
 * what the table holds. (Before, `/decisions`, the backlog and drift loaded every record of their
 * statuses since their date.)
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import type { DecisionRecord, RecordStatus } from "../../shared/domain/decision-record.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { DRIFT, REVIEW, TABLE_INDEXES } from "../../shared/domain/topology.ts";
import { pageOfDecisions } from "../../shared/pages/decisions-view.ts";
import { runDriftCheck } from "../../shared/use-cases/drift-check.ts";
import { reviewBacklog } from "../../shared/use-cases/review/review-backlog.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const RECORDS = 3_000;
const POLICIES = ["tickets", "other-tickets"];
const NOW = new Date("2031-06-02T00:00:00.000Z");

/** One DynamoDB call as the wrapped client saw it. */
interface Call {
  readonly command: string;
  /** Items (or, for BatchGetItem, records) it returned. */
  readonly items: number;
  /** Entries a query evaluated (its filter may have discarded some). */
  readonly scanned: number;
  readonly countOnly: boolean;
}

let dynamo: LocalDynamoDb;
let calls: Call[] = [];
let store: DynamoDbDecisionStore;
const policies = new PolicyRegistry(POLICIES.map((id) => ({ ...TEAMS_POLICY, id })));

/** The client, every call counted. */
function counting(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
  const send = async (command: { constructor: { name: string }; input: { Select?: string } }) => {
    const output = (await client.send(command as never)) as {
      Items?: unknown[];
      Responses?: Record<string, unknown[]>;
      ScannedCount?: number;
    };
    const items = output.Items?.length ?? Object.values(output.Responses ?? {}).flat().length;
    calls.push({
      command: command.constructor.name,
      items,
      scanned: output.ScannedCount ?? items,
      countOnly: command.input.Select === "COUNT",
    });
    return output;
  };
  return new Proxy(client, { get: (target, key) => (key === "send" ? send : Reflect.get(target, key)) });
}

/** The calls `read` makes. */
async function callsOf(read: () => Promise<unknown>): Promise<Call[]> {
  calls = [];
  await read();
  return calls;
}

const sum = (list: readonly Call[], field: "items" | "scanned") => list.reduce((a, c) => a + c[field], 0);
const queries = (list: readonly Call[]) => list.filter((c) => c.command === "QueryCommand");
const gets = (list: readonly Call[]) => list.filter((c) => c.command === "BatchGetCommand");

function record(i: number): DecisionRecord {
  const statuses: RecordStatus[] = [
    "auto_approved",
    "auto_approved",
    "actioned",
    "pending_review",
    "reviewed",
  ];
  const status = i % 25 === 0 ? "rejected" : statuses[i % statuses.length]!;
  const at = new Date(NOW.getTime() - 86_400_000 + i * 25_000).toISOString(); // the last day
  return {
    itemId: `B-${i}`,
    policyId: POLICIES[i % 2]!,
    policyVersion: status === "rejected" ? 0 : 1,
    status,
    ...(status === "rejected"
      ? { problems: [{ field: "state", message: "empty" }] }
      : {
          route: status === "pending_review" || status === "reviewed" ? "human" : "auto",
          reason: "confident",
          chosen: "billing",
          distribution: { billing: 0.7, technical: 0.3 },
          rawLogits: [1, 0],
        }),
    ...(status === "reviewed" ? { label: "billing", reviewedAt: at } : {}),
    state: { subject: `ticket ${i}`, body: "x".repeat(200) },
    createdAt: at,
    updatedAt: at,
    eventPublished: true,
  };
}

beforeAll(async () => {
  dynamo = await startDynamoDbLocal({ port: await freePort() });
  await ensureDecisionsTable(dynamo.endpoint, "bounded");
  store = new DynamoDbDecisionStore(
    counting(documentClient(localServiceOptions(dynamo.endpoint))),
    "bounded",
  );
  for (let i = 0; i < RECORDS; i += 50)
    await Promise.all(Array.from({ length: 50 }, (_, j) => store.create(record(i + j))));
}, 300_000);

afterAll(async () => {
  await dynamo?.stop();
});

describe(`reads on a table of ${RECORDS} records`, () => {
  const shards = TABLE_INDEXES.shards;

  it("reads a page of the review queue and its capped total, not the queue", async () => {
    const limit = REVIEW.pageSize;
    const page = await store.pageReviewQueue({ policyIds: POLICIES, limit, countCap: REVIEW.queueCountCap });
    expect(page.records).toHaveLength(limit);
    const made = await callsOf(() =>
      store.pageReviewQueue({ policyIds: POLICIES, limit, countCap: REVIEW.queueCountCap }),
    );
    const partitions = POLICIES.length * shards;
    const chunk = Math.ceil(limit / partitions) + 1;
    const listed = queries(made).filter((c) => !c.countOnly);
    expect(sum(listed, "items")).toBeLessThanOrEqual(limit + partitions * chunk);
    expect(sum(gets(made), "items")).toBeLessThanOrEqual(limit);
    // The count returns numbers only, and evaluates no more than its cap.
    for (const c of queries(made).filter((q) => q.countOnly)) expect(c.items).toBe(0);
    expect(page.total).toBe(RECORDS / 5); // every fifth record waits
  });

  it("reads one page of the decisions view, filtered in the query, whatever the window holds", async () => {
    const filters = { policy: "", route: "", since: "", until: "", batch: "", problems: [] };
    const made = await callsOf(() => pageOfDecisions(store, filters, policies, { now: NOW }));
    const partitions = (POLICIES.length + 1) * shards;
    const limit = 50;
    expect(sum(queries(made), "items")).toBeLessThanOrEqual(
      limit + partitions * (Math.ceil(limit / partitions) + 1),
    );
    expect(sum(gets(made), "items")).toBe(limit);
    // A filter nothing passes stops at the page's read budget, with a cursor to go on.
    const none = { ...filters, batch: "b-none-of-these" };
    let next: string | undefined;
    const filtered = await callsOf(async () => {
      next = (await pageOfDecisions(store, none, policies, { now: NOW })).next;
    });
    expect(sum(queries(filtered), "scanned")).toBeLessThanOrEqual(
      TABLE_INDEXES.pageReadBudget + partitions * (Math.ceil(limit / partitions) + 1),
    );
    expect(sum(queries(filtered), "scanned")).toBeLessThan(RECORDS);
    expect(next).toBeDefined();
  });

  it("reads each policy's backlog with a count and one entry per shard", async () => {
    const made = await callsOf(() => reviewBacklog({ store, policies }, NOW, 60));
    for (const c of queries(made)) expect(c.items).toBeLessThanOrEqual(c.countOnly ? 0 : 2);
    expect(sum(gets(made), "items")).toBe(0);
  });

  it("samples the drift check's decisions: at most the sample size evaluated per policy", async () => {
    const size = 300;
    const made = await callsOf(() =>
      store.sampleDecisions({
        policyId: "tickets",
        policyVersion: 1,
        since: new Date(NOW.getTime() - 86_400_000).toISOString(),
        until: NOW.toISOString(),
        size,
        slices: DRIFT.slices,
      }),
    );
    expect(sum(queries(made), "scanned")).toBeLessThanOrEqual(size);
    expect(sum(gets(made), "items")).toBeLessThanOrEqual(size);
    const check = await callsOf(() =>
      runDriftCheck({ store, policies, publisher: { publish: async () => {} } }, { now: NOW }),
    );
    expect(sum(queries(check), "scanned")).toBeLessThanOrEqual(DRIFT.sampleSize * POLICIES.length);
  });

  it("reads calibration's reviewed labels a page at a time", async () => {
    let reviewed = 0;
    const made = await callsOf(async () => {
      for await (const _ of store.reviewedSince("tickets", "0")) reviewed++;
    });
    expect(reviewed).toBeGreaterThan(TABLE_INDEXES.batchGetKeys);
    for (const c of [...queries(made), ...gets(made)])
      expect(c.items).toBeLessThanOrEqual(TABLE_INDEXES.batchGetKeys);
  });
});

/**
 * The sample cascade through the local mode's batch lane (issue 41): a slice of the sample
 * moderation batch (events/items/moderation-batch.jsonl) goes through batch intake, the async
 * lane's submit function, the async endpoint's stand-in on the real container (the local mode's
 * demo model, and `demo-large` beside it), and the result function, on DynamoDB Local, local SQS and
 * the local bus. The records are then read: every item the first model passed on holds two tiers,
 * the second `demo-large`'s, as the live lane records them; an item it did not pass on holds one.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { type LocalWiring, startLocalWiring } from "../../infra/local/wiring.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { DynamoDbBatchStore } from "../../shared/adapters/dynamodb/dynamodb-batch-store.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { isComplete } from "../../shared/domain/batch.ts";
import { passesOn } from "../../shared/domain/cascade.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { queueBatchFiles } from "../../shared/use-cases/batch-files.ts";
import { runIntake } from "../../shared/use-cases/batch-intake.ts";
import { startTestEndpoint } from "../helpers/endpoint.ts";
import { demoLargeModelPath, demoModelPath, REPO_ROOT } from "../helpers/models.ts";

/** Items of the sample batch run (its first lines: enough for objects of 10 and both routes). */
const ITEMS = 40;

let endpoint: RunningServer;
let wiring: LocalWiring;
let folder: string;
let batches: DynamoDbBatchStore;

beforeAll(async () => {
  // The local mode's two models: a later tier answering with the first's model hash is not acted on.
  endpoint = await startTestEndpoint({
    "queue-size": "64",
    model: await demoModelPath(),
    "extra-model": `demo-large=${await demoLargeModelPath()}`,
  });
  folder = await mkdtemp(join(tmpdir(), "async-cascade-"));
  wiring = await startLocalWiring({
    endpointUrl: endpoint.url,
    root: REPO_ROOT,
    ports: { dynamodb: 0, sqs: 0, bus: 0 },
    intake: { visibilitySeconds: 30, maxItemFailures: 3, maxReceiveCount: 1000 },
    batchFolder: folder,
    asyncLane: { resultPollers: 1, resultsVisibilitySeconds: 5, itemsPerObject: 10, gatherMs: 300 },
    started: [],
  });
  batches = new DynamoDbBatchStore(
    documentClient(localServiceOptions(wiring.env.AWS_ENDPOINT_URL_DYNAMODB!)),
    wiring.env.DECISIONS_TABLE!,
  );
}, 180_000);

afterAll(async () => {
  await wiring?.stop();
  await endpoint?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe("the sample cascade in the local batch lane", () => {
  it("records every item the first model passed on with two tiers, the second demo-large's", async () => {
    const lines = (await readFile(join(REPO_ROOT, "events/items/moderation-batch.jsonl"), "utf8"))
      .split("\n")
      .filter((line) => line.trim() !== "")
      .slice(0, ITEMS);
    const objects = new FsObjectStore(folder);
    const key = "incoming/content-moderation/b-async-cascade/sample.jsonl";
    await objects.put(key, `${lines.join("\n")}\n`);
    const policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events/policies"));
    const { batchId } = await runIntake(
      {
        batches,
        objects,
        queue: wiring.queues.batch!,
        files: queueBatchFiles(wiring.queues.batchFiles!),
        policies,
        now: () => new Date(),
      },
      key,
    );
    const deadline = Date.now() + 300_000;
    let batch = (await batches.getBatch(batchId))!;
    while (!isComplete(batch) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      batch = (await batches.getBatch(batchId))!;
    }
    expect(batch.counts).toMatchObject({ accepted: ITEMS, decided: ITEMS, deadLettered: 0 });
    const policy = policies.current("content-moderation")!;
    let passedOn = 0;
    for (const line of lines) {
      const { id } = JSON.parse(line) as { id: string };
      const record = (await wiring.baseDeps.store.get({
        itemId: id,
        policyId: policy.id,
        policyVersion: policy.version,
      }))!;
      const tiers = record.tiers!;
      expect(tiers.length, id).toBeGreaterThanOrEqual(1);
      if (!passesOn(tiers[0]!.reason)) {
        expect(tiers, id).toHaveLength(1);
        continue;
      }
      passedOn++;
      expect(
        tiers.map((t) => t.model),
        id,
      ).toEqual([undefined, "demo-large"]);
      expect(tiers[1]!.modelSha256).not.toBe(tiers[0]!.modelSha256);
      expect(record.chosen).toBe(tiers[1]!.chosen);
    }
    expect(passedOn, "the demo model passes items on").toBeGreaterThan(0);
  }, 400_000);
});

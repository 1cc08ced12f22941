/**
 * The object stores against their contract: a folder (the local mode's bucket), and S3 through
 * the AWS SDK against moto's S3 server on loopback (skipping visibly where moto is absent); and
 * the batch intake function reading a file from that S3 on the notification S3 sends.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import type { Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localServiceOptions, s3Client } from "../../shared/adapters/aws-clients.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import { S3ObjectStore } from "../../shared/adapters/s3-object-store.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { objectStoreContract } from "../helpers/object-store.contract.ts";

const root = await mkdtemp(join(tmpdir(), "object-store-"));
objectStoreContract("folder", () => new FsObjectStore(root));

const motoAvailable = spawnSync("moto_server", ["--help"]).status === 0;
if (!motoAvailable)
  console.warn(
    "SKIP: moto_server is absent (pip install 'moto[server]'), so the S3 object store is not tested",
  );

let moto: ChildProcess | undefined;
let client: S3Client | undefined;

beforeAll(async () => {
  if (!motoAvailable) return;
  const port = await freePort();
  moto = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
  client = s3Client(localServiceOptions(`http://127.0.0.1:${port}`));
  // Wait for moto to answer (it takes a second or two to start), failing on lack of progress.
  for (let attempt = 0; ; attempt++) {
    try {
      await client.send(new CreateBucketCommand({ Bucket: "batches" }));
      return;
    } catch (error) {
      if (attempt >= 60 || moto.exitCode !== null)
        throw new Error(`moto_server did not start: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}, 60_000);

afterAll(() => {
  client?.destroy();
  moto?.kill();
});

if (motoAvailable) objectStoreContract("S3 on moto", () => new S3ObjectStore(client!, "batches"));

/** An S3 "object created" notification as S3 sends it to a function (keys URL-encoded). */
function s3Event(bucket: string, key: string, eTag: string, size: number) {
  return {
    Records: [
      {
        eventVersion: "2.1",
        eventSource: "aws:s3",
        awsRegion: "us-east-1",
        eventTime: new Date().toISOString(),
        eventName: "ObjectCreated:Put",
        userIdentity: { principalId: "AWS:EXAMPLE" },
        requestParameters: { sourceIPAddress: "127.0.0.1" },
        responseElements: { "x-amz-request-id": "r", "x-amz-id-2": "i" },
        s3: {
          s3SchemaVersion: "1.0",
          configurationId: "intake",
          bucket: { name: bucket, ownerIdentity: { principalId: "EXAMPLE" }, arn: `arn:aws:s3:::${bucket}` },
          object: {
            key: encodeURIComponent(key).replace(/%2F/g, "/").replace(/%20/g, "+"),
            size,
            eTag,
            sequencer: "0A1B",
          },
        },
      },
    ],
  };
}

describe.skipIf(!motoAvailable)("the batch intake function on moto's S3", () => {
  it("reads a dropped file named with spaces, queues its items and writes the refused lines, the same on a second notification", async () => {
    const { createBatchIntakeHandler } = await import("../../functions/batch-intake.ts");
    const objects = new S3ObjectStore(client!, "batches");
    const key = "incoming/ticket-routing/weekly tickets.jsonl";
    const body = `${JSON.stringify({ id: "W-1", state: "charged twice" })}\n${JSON.stringify({ id: "W-2", state: "" })}\n`;
    await objects.put(key, body);
    const sent: string[] = [];
    const batches = new InMemoryBatchStore();
    const handler = createBatchIntakeHandler(async () => ({
      batches,
      now: () => new Date(),
      objects,
      files: { request: async () => {} },
      policies: await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies")),
      queue: {
        sendBatch: async (messages: readonly { body: string }[]) => {
          sent.push(...messages.map((m) => m.body));
          return [];
        },
      } as unknown as MessageQueue,
    }));
    const context = {
      functionName: "intake",
      awsRequestId: "req",
      getRemainingTimeInMillis: () => 60_000,
    } as unknown as Context;
    const event = s3Event("batches", key, "etag-1", body.length);
    const first = (await handler(event as never, context)) as {
      results: { batchId: string; counts: { accepted: number; rejected: number } }[];
    };
    expect(first.results[0]!.counts).toMatchObject({ accepted: 1, rejected: 1 });
    const batchId = first.results[0]!.batchId;
    expect(JSON.parse(sent[0]!)).toMatchObject({ id: "W-1", policy: "ticket-routing", batchId });
    const refused = (await objects.list(`batches/${batchId}/`)).map((o) => o.key);
    expect(refused).toContain(`batches/${batchId}/rejected.jsonl`);
    const again = (await handler(event as never, context)) as typeof first;
    expect(again.results[0]!.batchId).toBe(batchId);
    expect((await batches.getBatch(batchId))!.counts).toMatchObject({ lines: 2, accepted: 1, rejected: 1 });
    // Anything else is refused by the schema, not run.
    await expect(handler({ Records: [{ nope: true }] } as never, context)).rejects.toThrow();
  });
});

/**
 * One event source mapping, two sides: each AWS::Lambda::EventSourceMapping the stack synthesizes
 * (the default stack, and `-c batchLane=realtime` for the decide function's batch lane) has the
 * batch size, batching window and maximum concurrency of the mapping's shape, and the local mode's
 * poller for the same consumer, started as the local mode starts it, holds that same shape. Every
 * mapping of the template is one of the table's, so a new consumer cannot miss it.
 */

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalAsyncLane } from "../../infra/local/async-lane.ts";
import { startBatchFilesPoller } from "../../infra/local/batch-files-step.ts";
import { startDecidePollers } from "../../infra/local/decide-pollers.ts";
import type { LocalEventBus } from "../../infra/local/event-bus.ts";
import type { LocalQueues } from "../../infra/local/local-queues.ts";
import type { SqsPoller } from "../../infra/local/sqs/sqs-poller.ts";
import { type LocalSqs, startLocalSqs } from "../../infra/local/sqs/sqs-server.ts";
import { startTargetQueue } from "../../infra/local/target-queue.ts";
import { localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { asyncItemsPerObject } from "../../shared/domain/async/async-objects.ts";
import { capacityPlan } from "../../shared/domain/capacity-plan.ts";
import {
  asyncSubmitMapping,
  decideBatchMapping,
  decideIntakeMapping,
  EVENT_SOURCE_MAPPINGS,
  type EventSourceMapping,
} from "../../shared/domain/topology/event-source-mapping.ts";
import type { DecideDependencies } from "../../shared/use-cases/decide-message.ts";

import { REPO_ROOT } from "../helpers/models.ts";

const run = promisify(execFile);
const CHILD = join(REPO_ROOT, "test/helpers/synth-mappings-child.ts");

/** How the stack and the local mode size the decide function for one instance (their defaults). */
const plan = capacityPlan({ mode: "realtime", minInstances: 1, maxInstances: 1 });

/** The consumers, by the logical-id prefix of their function, and the shape each reads. */
const CONSUMERS: Record<string, EventSourceMapping> = {
  PipelineDecide: decideIntakeMapping(plan),
  PipelineAutoAction: EVENT_SOURCE_MAPPINGS.target,
  PipelineReviewIntake: EVENT_SOURCE_MAPPINGS.target,
  PipelineBatchFiles: EVENT_SOURCE_MAPPINGS.batchFiles,
  PipelineAsyncSubmit: asyncSubmitMapping(asyncItemsPerObject()),
  PipelineAsyncResults: EVENT_SOURCE_MAPPINGS.asyncResults,
};

/** The mappings a stack with `props` synthesizes (bundling skipped, no cdk-nag), in a child process. */
async function synthesized(props: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", CHILD, JSON.stringify(props)], {
    cwd: REPO_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as Record<string, unknown>[];
}

/** Each mapping: its function's logical id, its queue's, and its shape as synthesized. */
function mappingsOf(properties: Record<string, unknown>[]) {
  return properties.map((p) => ({
    fn: (p.FunctionName as { Ref: string }).Ref,
    queue: (p.EventSourceArn as { "Fn::GetAtt": string[] })["Fn::GetAtt"][0]!,
    shape: shapeOf(p),
    reportsFailures: p.FunctionResponseTypes,
  }));
}

/** A synthesized mapping in the shape's words. */
function shapeOf(p: Record<string, unknown>): EventSourceMapping {
  const concurrency = (p.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency;
  return {
    batchSize: p.BatchSize as number,
    ...(p.MaximumBatchingWindowInSeconds !== undefined
      ? { maxBatchingWindowSeconds: p.MaximumBatchingWindowInSeconds as number }
      : {}),
    ...(concurrency !== undefined ? { maxConcurrency: concurrency } : {}),
  };
}

/** The consumer whose function's logical id is `fnId` (a prefix and 8 hex digits). */
const consumerOf = (fnId: string) =>
  Object.keys(CONSUMERS).find((prefix) => new RegExp(`^${prefix}[0-9A-F]{8}$`).test(fnId));

describe("the deployed event source mappings", () => {
  let byDefault: ReturnType<typeof mappingsOf>;

  beforeAll(async () => {
    byDefault = mappingsOf(await synthesized());
  }, 300_000);

  it("each has the shape of its consumer's mapping, with partial batch failures", () => {
    expect(byDefault.map((m) => consumerOf(m.fn)).sort()).toEqual(Object.keys(CONSUMERS).sort());
    for (const mapping of byDefault) {
      expect({ fn: mapping.fn, shape: mapping.shape }).toEqual({
        fn: mapping.fn,
        shape: CONSUMERS[consumerOf(mapping.fn)!],
      });
      expect(mapping.reportsFailures).toEqual(["ReportBatchItemFailures"]);
    }
  });

  it("the decide function's batch lane (-c batchLane=realtime) has the batch lane's shape", async () => {
    const realtime = mappingsOf(await synthesized({ batchLane: "realtime" }));
    const onBatch = realtime.filter(
      (m) => consumerOf(m.fn) === "PipelineDecide" && m.queue.startsWith("PipelineBatchQueue"),
    );
    expect(onBatch.map((m) => m.shape)).toEqual([decideBatchMapping(plan)]);
    expect(onBatch[0]!.reportsFailures).toEqual(["ReportBatchItemFailures"]);
  }, 300_000);
});

describe("the local mode's pollers", () => {
  let sqs: LocalSqs;
  let folder: string;
  const started: { stop(): Promise<unknown> }[] = [];
  const createQueue = (name: string, attributes: Record<string, string> = {}) =>
    SqsQueue.create(sqsClient(localServiceOptions(sqs.endpoint)), name, attributes);

  beforeAll(async () => {
    sqs = await startLocalSqs({ port: 0, hostname: "127.0.0.1" });
    folder = await mkdtemp(join(tmpdir(), "mappings-"));
  });

  afterAll(async () => {
    for (const running of started) await running.stop();
    await sqs?.close();
    await rm(folder, { recursive: true, force: true });
  });

  /** What the functions' dependencies read; no message arrives, so nothing is called. */
  const env = {
    DECISIONS_TABLE: "decisions",
    EVENT_BUS_NAME: "decisions",
    BATCH_BUCKET: "local-pipeline-bucket",
    BATCH_FILES_QUEUE_URL: "http://127.0.0.1:9/queue/batch-files",
    AWS_REGION: "us-east-1",
  };

  /** The shape a running poller holds. */
  const held = (poller: SqsPoller) => poller.mapping;

  it("the decide pollers hold the decide function's shapes, sized as the local mode sizes them", async () => {
    const queues = { intake: await createQueue("intake"), batch: await createQueue("batch") };
    const pollers = await startDecidePollers(
      {
        decidePollers: plan.intake,
        decideBatchSize: plan.batchSize,
        batchPollers: plan.batch,
        batchLane: "realtime",
      },
      queues as unknown as LocalQueues,
      () => ({}) as DecideDependencies,
      env,
    );
    started.push(pollers);
    expect(pollers.all.decide.map(held)).toEqual(Array(plan.intake).fill(CONSUMERS.PipelineDecide));
    expect(pollers.all.batch.map(held)).toEqual(Array(plan.batch).fill(decideBatchMapping(plan)));
  });

  it("a rule target and the batch files step hold theirs", async () => {
    const bus = { addRule: () => undefined } as unknown as LocalEventBus;
    const target = await startTargetQueue({
      createQueue,
      bus,
      name: "auto-action",
      pattern: {},
      handler: async () => ({ batchItemFailures: [] }),
      visibilityTimeoutSeconds: 30,
      maxReceiveCount: 5,
      ruleDeadLetter: async () => undefined,
    });
    started.push(target.poller);
    expect(held(target.poller)).toEqual(CONSUMERS.PipelineAutoAction);
    const files = await startBatchFilesPoller(await createQueue("batch-files"), "arn:local", env);
    started.push(files);
    expect(held(files)).toEqual(CONSUMERS.PipelineBatchFiles);
  });

  it("the async lane's submit and result pollers hold theirs", async () => {
    const lane = await startLocalAsyncLane({
      env,
      createQueue,
      batch: await createQueue("async-batch"),
      batchDeadLetters: await createQueue("async-batch-dlq"),
      folder,
      containerUrl: "http://127.0.0.1:9",
    });
    started.push(lane);
    expect(held(lane.submit)).toEqual(CONSUMERS.PipelineAsyncSubmit);
    expect(lane.results.map(held)).toEqual([CONSUMERS.PipelineAsyncResults]);
  });
});

/**
 * What the decide handler tells CloudWatch under overload (EMF lines captured from stdout):
 * - the age of the oldest item it received, per lane, from each record's SentTimestamp, also for
 *   items received three times or more (those SQS's ApproximateAgeOfOldestMessage leaves out);
 * - `endpoint_failures` for an item the endpoint failed (a container answering 500), never for
 *   one it refused as overloaded (503 queue_full), which goes back to its queue to wait.
 * The SDK client throws the SDK's own ModelError (a real endpoint cannot answer 500 or be full on
 * cue here); the classification, the handler and the failed-delivery settlement are the real ones.
 */
import { join } from "node:path";
import { ModelError, type SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import type { SQSRecord } from "aws-lambda";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SageMakerDecisionEndpoint } from "../../shared/adapters/decision-endpoint.ts";
import type { MessageQueue, QueueDirectory } from "../../shared/domain/message-queue.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { DECIDE_QUEUES, ENDPOINT_CALLS, METRICS } from "../../shared/domain/topology.ts";
import { inMemoryDecideDependencies } from "../helpers/decide-dependencies.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const INTAKE = "arn:aws:sqs:us-east-1:123456789012:intake";
const BATCH = "arn:aws:sqs:us-east-1:123456789012:batch";
const HOUR_MS = 3_600_000;

type Emf = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
};

let createDecideHandler: typeof import("../../functions/decide.ts").createDecideHandler;
let policies: PolicyRegistry;

beforeAll(async () => {
  // Read when the handler's module builds its Metrics: set before the import.
  process.env.POWERTOOLS_METRICS_DISABLED = "false";
  ({ createDecideHandler } = await import("../../functions/decide.ts"));
  policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"));
});

afterEach(() => {
  vi.restoreAllMocks();
});

const containerError = (status: number, code: string) =>
  new ModelError({
    $metadata: { httpStatusCode: 424 },
    message: "wrapped",
    OriginalStatusCode: status,
    OriginalMessage: JSON.stringify({ error: { code, message: code } }),
  });

/** The handler on an endpoint whose every call fails with `error`, and the visibility changes made. */
function handlerFailingWith(error: Error) {
  const client = { send: async () => Promise.reject(error) } as unknown as SageMakerRuntimeClient;
  const visibility: number[] = [];
  const queue = {
    changeVisibility: async (_handle: string, seconds: number) => void visibility.push(seconds),
  } as unknown as MessageQueue;
  const queues: QueueDirectory = { queue: async () => queue, deadLetterQueueOf: async () => undefined };
  const handler = createDecideHandler(
    async () =>
      inMemoryDecideDependencies(
        policies,
        new SageMakerDecisionEndpoint(client, "decide", { ...ENDPOINT_CALLS, baseDelayMs: 1 }),
      ),
    () => ({ queues, limits: DECIDE_QUEUES, draw: () => 0 }),
    () => BATCH,
  );
  return { handler, visibility };
}

function record(id: string, sourceArn: string, sentMsAgo: number, receiveCount: number): SQSRecord {
  return {
    messageId: id,
    receiptHandle: id,
    body: JSON.stringify({ id, policy: "ticket-routing", state: "charged twice" }),
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: String(Date.now() - sentMsAgo),
      SenderId: "x",
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: sourceArn,
    awsRegion: "us-east-1",
  };
}

/** Runs the handler on `records`, returning the EMF objects it printed. */
async function emfOf(handler: ReturnType<typeof handlerFailingWith>["handler"], records: SQSRecord[]) {
  const lines: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  const response = await handler({ Records: records }, { functionName: "decide" } as never);
  vi.restoreAllMocks();
  const emf = lines
    .join("")
    .split("\n")
    .filter((line) => line.includes('"CloudWatchMetrics"'))
    .map((line) => JSON.parse(line) as Emf);
  return { emf, response };
}

/** Every value emitted under metric `name` with the given dimension values. */
function valuesOf(emf: Emf[], name: string, dimensions: Record<string, string>): number[] {
  return emf
    .filter((e) => e._aws.CloudWatchMetrics.some((d) => d.Metrics.some((m) => m.Name === name)))
    .filter((e) => Object.entries(dimensions).every(([k, v]) => e[k] === v))
    .flatMap((e) => [e[name]].flat() as number[]);
}

describe("the oldest item's age", () => {
  it("reports the age of items received three times or more, per lane, with the service dimension", async () => {
    const { handler, visibility } = handlerFailingWith(containerError(503, "queue_full"));
    const { emf, response } = await emfOf(handler, [
      record("OLD", INTAKE, 2 * HOUR_MS, 7),
      record("NEW", INTAKE, 5_000, 1),
    ]);
    // Both waited out the overload: returned with a backoff, no failure.
    expect(visibility).toHaveLength(2);
    expect(response.batchItemFailures).toHaveLength(2);
    const ages = valuesOf(emf, METRICS.oldestItemAgeSeconds, {
      service: METRICS.service.decide,
      [METRICS.laneDimension]: METRICS.lanes.intake,
    });
    expect(ages).toHaveLength(1);
    expect(ages[0]).toBeGreaterThanOrEqual(7200);
    expect(ages[0]).toBeLessThan(7200 + 600);
    const directive = emf.find((e) => e[METRICS.oldestItemAgeSeconds] !== undefined)!._aws
      .CloudWatchMetrics[0]!;
    expect(directive.Metrics).toContainEqual({ Name: METRICS.oldestItemAgeSeconds, Unit: "Seconds" });
    expect(directive.Dimensions.flat().sort()).toEqual([METRICS.laneDimension, "service"].sort());
  });

  it("tells the batch lane's records apart from the intake's", async () => {
    const { handler } = handlerFailingWith(containerError(503, "queue_full"));
    const { emf } = await emfOf(handler, [record("B1", BATCH, HOUR_MS, 4)]);
    const batch = valuesOf(emf, METRICS.oldestItemAgeSeconds, { [METRICS.laneDimension]: "batch" });
    const intake = valuesOf(emf, METRICS.oldestItemAgeSeconds, { [METRICS.laneDimension]: "intake" });
    expect(batch).toHaveLength(1);
    expect(batch[0]).toBeGreaterThanOrEqual(3600);
    expect(intake).toEqual([]);
  });
});

describe("endpoint failures", () => {
  it("does not count an overload refusal (503 queue_full)", async () => {
    const { handler } = handlerFailingWith(containerError(503, "queue_full"));
    const { emf } = await emfOf(handler, [record("A", INTAKE, 1000, 1)]);
    expect(valuesOf(emf, "items_waiting", {})).toEqual([1]);
    expect(valuesOf(emf, METRICS.endpointFailures, {})).toEqual([]);
  });

  it("counts an item a container answering 500 failed", async () => {
    const { handler, visibility } = handlerFailingWith(containerError(500, "internal_error"));
    const { emf } = await emfOf(handler, [record("A", INTAKE, 1000, 1), record("B", INTAKE, 1000, 1)]);
    expect(visibility).toEqual([]);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    expect(sum(valuesOf(emf, "items_retrying", {}))).toBe(2);
    expect(sum(valuesOf(emf, METRICS.endpointFailures, { service: METRICS.service.decide }))).toBe(2);
  });
});

/**
 * The local mode's capacity follower on the local SQS: the decide pollers follow the local
 * endpoint's instances as the deployed mapping follows the fleet (a group started at the scaling
 * maximum's size shrinks to what one instance admits; more instances grow it), and each period
 * records the reading with the depth the intake's queue answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalFollower } from "../../infra/local/local-follower.ts";
import { PollerGroup } from "../../infra/local/poller-group.ts";
import { startSqsPoller } from "../../infra/local/sqs/sqs-poller.ts";
import { type LocalSqs, startLocalSqs } from "../../infra/local/sqs/sqs-server.ts";
import { localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import type { FleetReading } from "../../shared/domain/fleet-reading.ts";

let sqs: LocalSqs;
let queue: SqsQueue;

beforeAll(async () => {
  sqs = await startLocalSqs({ port: 0, hostname: "127.0.0.1" });
  queue = await SqsQueue.create(sqsClient(localServiceOptions(sqs.endpoint)), "follower-intake");
});

afterAll(async () => {
  await sqs?.close();
});

describe("the local capacity follower", () => {
  it("resizes the pollers to what the instances admit and records the intake's depth", async () => {
    const group = new PollerGroup(
      () =>
        startSqsPoller({
          queue,
          queueArn: "arn:local:follower-intake",
          handler: async () => ({ batchItemFailures: [] }),
          mapping: { batchSize: 1 },
        }),
      8,
    );
    for (let i = 0; i < 5; i++) await queue.send(`item ${i}`);
    const recorded: FleetReading[] = [];
    // What the local SQS answered: its counts are approximate, as AWS's are (under load a
    // receive in progress was counted both visible and in flight: 7 of 5 sent).
    const answered: { visible: number; inFlight: number }[] = [];
    const depth = async () => {
      const read = await queue.depth();
      answered.push(read);
      return read;
    };
    let instances = 1;
    const stop = await startLocalFollower({
      instances: 1,
      secondsPerItem: 1.5,
      intake: { depth },
      mapping: group,
      readings: { record: async (r) => void recorded.push(r) },
      periodMs: 60_000,
    });
    expect(await group.current()).toBe(2);
    expect(group.pollers).toHaveLength(2);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ instances: 1, desiredInstances: 1, secondsPerItem: 1.5 });
    expect(answered).toHaveLength(1);
    expect(recorded[0]).toMatchObject(answered[0]!);
    await stop();
    instances = 4;
    const again = await startLocalFollower({
      instances,
      secondsPerItem: 1.5,
      intake: { depth: () => queue.depth() },
      mapping: group,
      readings: { record: async () => undefined },
      periodMs: 60_000,
    });
    expect(group.pollers).toHaveLength(6);
    await again();
    await group.stop();
  }, 60_000);
});

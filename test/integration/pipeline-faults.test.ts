/**
 * Faults over 1,000+ items on the real local services: endpoint failures (model errors, 503,
 * throttling, hangs past the timeout), PutEvents entries failing, crashes between the record write
 * and the event, duplicate deliveries racing on two pollers, poison messages and invalid items.
 * Every item must end in exactly one terminal state, none lost, none routed twice; the figures
 * are printed.
 */
import { ReceiveMessageCommand, SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DecisionRecord } from "../../shared/decision-record.ts";
import { SeededRandom } from "../../shared/random.ts";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { type LocalPipeline, startLocalPipeline } from "../helpers/local-pipeline.ts";

const ITEMS = 1000;
const POISON = 5;
const INVALID = 10;
const random = new SeededRandom(11);
let proxy: FaultProxy;
let pipeline: LocalPipeline;
const crashes = new Set<string>();
let busFailures = 0;

beforeAll(async () => {
  pipeline = await startLocalPipeline({
    pollers: 2,
    maxReceiveCount: 3,
    // As AWS advises, the visibility timeout exceeds the longest a batch can take (4 endpoint
    // tries of up to 0.8 s plus backoff, about 4 s): otherwise a message still being decided
    // comes back, and can be dead-lettered while another worker completes it.
    visibilityTimeoutSeconds: 6,
    endpointTimeoutMs: 800,
    endpointUrl: async (real) => {
      proxy = await startFaultProxy(real, 0.3, 1500);
      return proxy.url;
    },
    failBusEntry: () => {
      const fail = random.nextFloat() < 0.1;
      if (fail) busFailures++;
      return fail;
    },
    wrap: (deps) => ({
      ...deps,
      // A crash after the record is written and before its event, once for 5% of items.
      afterRecordWrite: (record: DecisionRecord) => {
        if (!crashes.has(record.itemId) && random.nextFloat() < 0.05) {
          crashes.add(record.itemId);
          throw new Error(`injected crash after writing ${record.itemId}`);
        }
      },
    }),
  });
}, 180_000);

afterAll(async () => {
  await pipeline?.stop();
  await proxy?.stop();
});

const policies = ["ticket-routing", "content-moderation", "pre-screen"];
const texts = [
  "charged twice refund",
  "app crashes on login",
  "password reset email",
  "free prize click now",
  "great post thanks",
];

describe("pipeline under faults", () => {
  it("ends every item in exactly one terminal state: none lost, none routed twice", async () => {
    const valid = Array.from({ length: ITEMS }, (_, i) => ({
      id: `ITEM-${String(i).padStart(5, "0")}`,
      policy: policies[i % policies.length]!,
      state: `${texts[i % texts.length]} number ${i}`,
    }));
    const poison = Array.from({ length: POISON }, (_, i) => ({
      id: `POISON-${i}`,
      policy: "ticket-routing",
      state: `POISON ${i}`,
    }));
    const invalid = Array.from({ length: INVALID }, (_, i) => ({
      id: `INVALID-${i}`,
      policy: "ticket-routing",
      state: "",
    }));
    const bodies = [...valid, ...poison, ...invalid].map((item) => JSON.stringify(item));
    // 10% of items are delivered twice, interleaved so that two pollers race on them.
    const duplicates = bodies.filter((_, i) => i % 10 === 3);
    const all = bodies.flatMap((body, i) => (i % 10 === 3 ? [body, body] : [body]));
    const started = performance.now();
    for (let i = 0; i < all.length; i += 10) {
      await pipeline.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: pipeline.intakeUrl,
          Entries: all.slice(i, i + 10).map((body, j) => ({ Id: String(j), MessageBody: body })),
        }),
      );
    }
    const deadline = Date.now() + 240_000;
    while ((await pipeline.depth(pipeline.intakeUrl)) > 0) {
      if (Date.now() > deadline) throw new Error("the intake queue did not drain");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await pipeline.bus.idle();
    const seconds = (performance.now() - started) / 1000;

    // Dead-letter queue contents.
    const inDlq = new Set<string>();
    for (;;) {
      const batch = await pipeline.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: pipeline.dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      if (!batch.Messages?.length) break;
      for (const message of batch.Messages) inDlq.add((JSON.parse(message.Body!) as { id: string }).id);
    }

    const madeCount = new Map<string, number>();
    for (const event of pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Made")) {
      const id = event.detail.itemId as string;
      madeCount.set(id, (madeCount.get(id) ?? 0) + 1);
    }
    const rejectedCount = new Map<string, number>();
    for (const event of pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Rejected")) {
      const id = event.detail.itemId as string;
      rejectedCount.set(id, (rejectedCount.get(id) ?? 0) + 1);
    }
    const routedCount = new Map<string, number>();
    for (const event of [...pipeline.routed.auto, ...pipeline.routed.human]) {
      const id = event.detail.itemId as string;
      routedCount.set(id, (routedCount.get(id) ?? 0) + 1);
    }

    const states = { decided: 0, rejected: 0, dlq: 0 };
    let lost = 0;
    let routedTwice = 0;
    let multipleStates = 0;
    for (const item of [...valid, ...poison, ...invalid]) {
      const policy = pipeline.deps.policies.current(item.policy)!;
      const record = await pipeline.deps.store.get({
        itemId: item.id,
        policyId: policy.id,
        policyVersion: policy.version,
      });
      const decided =
        record?.status !== "rejected" && record?.eventPublished === true && madeCount.get(item.id) === 1;
      const rejected = (rejectedCount.get(item.id) ?? 0) === 1;
      const dead = inDlq.has(item.id);
      const count = Number(decided) + Number(rejected) + Number(dead);
      if (count === 0) {
        lost++;
        if (lost <= 5)
          console.log(
            "LOST",
            item.id,
            JSON.stringify({
              status: record?.status,
              published: record?.eventPublished,
              made: madeCount.get(item.id),
              rejected: rejectedCount.get(item.id),
            }),
          );
      }
      if (count > 1) multipleStates++;
      if (
        (madeCount.get(item.id) ?? 0) > 1 ||
        (routedCount.get(item.id) ?? 0) > 1 ||
        (rejectedCount.get(item.id) ?? 0) > 1
      )
        routedTwice++;
      if (decided) states.decided++;
      else if (rejected) states.rejected++;
      else if (dead) states.dlq++;
    }
    const stats = pipeline.pollers.reduce(
      (sum, p) => ({
        invocations: sum.invocations + p.stats.invocations,
        records: sum.records + p.stats.records,
        failures: sum.failures + p.stats.failures,
      }),
      { invocations: 0, records: 0, failures: 0 },
    );
    console.log(
      [
        `fault suite: ${valid.length + poison.length + invalid.length} items (${all.length} messages, ${duplicates.length} duplicated) in ${seconds.toFixed(1)} s`,
        `  endpoint calls: ${proxy.counts.forwarded} answered, ${proxy.counts.modelError} model errors, ${proxy.counts.unavailable} 503, ${proxy.counts.throttled} throttled, ${proxy.counts.hung} hung past the timeout, ${proxy.counts.poison} poison`,
        `  PutEvents entries failed: ${busFailures}; crashes after the record write: ${crashes.size}`,
        `  deliveries: ${stats.records} records in ${stats.invocations} invocations, ${stats.failures} reported back for retry`,
        `  terminal states: ${states.decided} decided and routed once, ${states.rejected} rejected, ${states.dlq} in the DLQ`,
        `  lost: ${lost}, routed twice: ${routedTwice}, in more than one state: ${multipleStates}`,
      ].join("\n"),
    );
    expect(lost).toBe(0);
    expect(routedTwice).toBe(0);
    expect(multipleStates).toBe(0);
    expect(states.rejected).toBe(INVALID);
    expect([...inDlq].filter((id) => id.startsWith("POISON-")).length).toBe(POISON);
    expect(states.decided + states.rejected + states.dlq).toBe(ITEMS + POISON + INVALID);
    // The faults really happened.
    expect(crashes.size).toBeGreaterThan(10);
    expect(busFailures).toBeGreaterThan(10);
    expect(proxy.counts.hung).toBeGreaterThan(10);
    expect(stats.failures).toBeGreaterThan(POISON);
  }, 300_000);
});

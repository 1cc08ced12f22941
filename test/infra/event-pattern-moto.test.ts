/**
 * Cross-checks the local bus's pattern matcher against an independent implementation: moto's
 * EventBridge (`moto_server` on loopback, a Python package installed on these machines). The same
 * rules, each with its own SQS target, and the same events go to both; every pattern/event pair
 * must be delivered by moto exactly when the local matcher matches. Patterns and events are
 * generated from a seed over every operator the pipeline's rules may use. Arrays of objects are
 * left out: moto does not flatten them as EventBridge does (the unit tests cover that case).
 * Skips, saying so, where moto is absent.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  CreateEventBusCommand,
  EventBridgeClient,
  PutEventsCommand,
  PutRuleCommand,
  PutTargetsCommand,
} from "@aws-sdk/client-eventbridge";
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EventPattern, matchesPattern } from "../../shared/domain/event-pattern.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { freePort } from "../helpers/local-pipeline.ts";

const motoAvailable = spawnSync("moto_server", ["--help"]).status === 0;
if (!motoAvailable)
  console.warn(
    "SKIP: moto_server is absent (pip install 'moto[server]'), so the matcher is not cross-checked",
  );

const PATTERNS = Number(process.env.XCHECK_PATTERNS ?? 30);
const EVENTS = Number(process.env.XCHECK_EVENT_BATCHES ?? 2);
let moto: ChildProcess | undefined;
let endpoint = "";

beforeAll(async () => {
  if (!motoAvailable) return;
  const port = await freePort();
  moto = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
  endpoint = `http://127.0.0.1:${port}`;
  // Ready when it answers; give up only if the process dies.
  for (;;) {
    if (moto.exitCode !== null) throw new Error(`moto_server exited with ${moto.exitCode}`);
    const ok = await fetch(`${endpoint}/moto-api/`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 120_000);

afterAll(() => {
  moto?.kill();
});

const strings = ["alpha", "beta", "Alpha", "alpha-beta", "gamma.1", "delta"];
const numbers = [-3, 0, 2.5, 10, 100];
const ips = ["10.0.0.1", "10.0.1.9", "192.168.1.1", "2001:db8::1", "2001:db9::5"];

/** A random event detail: scalars, arrays of scalars, a nested object, fields sometimes absent or null. */
function randomDetail(random: SeededRandom, n: number): Record<string, unknown> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random.nextFloat() * list.length)]!;
  const detail: Record<string, unknown> = { n };
  if (random.nextFloat() < 0.85) detail.s = pick(strings);
  if (random.nextFloat() < 0.8) detail.num = pick(numbers);
  if (random.nextFloat() < 0.7) detail.flag = random.nextFloat() < 0.5;
  if (random.nextFloat() < 0.7) detail.ip = pick(ips);
  if (random.nextFloat() < 0.6) detail.tags = strings.filter(() => random.nextFloat() < 0.3);
  if (random.nextFloat() < 0.6) detail.nested = { k: pick(strings) };
  if (random.nextFloat() < 0.3) detail.opt = null;
  return detail;
}

/** A random leaf rule for one field. */
function randomLeaf(random: SeededRandom, field: string): unknown[] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random.nextFloat() * list.length)]!;
  const word = pick(strings);
  switch (field) {
    case "num":
      return pick([
        [pick(numbers)],
        [{ numeric: [">", pick(numbers)] }],
        [{ numeric: [">=", 0, "<", pick([1, 10, 50])] }],
        [{ "anything-but": [pick(numbers), pick(numbers)] }],
        [{ exists: random.nextFloat() < 0.5 }],
      ]);
    case "flag":
      return [random.nextFloat() < 0.5];
    case "ip":
      return pick([
        [{ cidr: "10.0.0.0/24" }],
        [{ cidr: "10.0.0.0/16" }],
        [{ cidr: "2001:db8::/32" }],
        [pick(ips)],
      ]);
    case "opt":
      return pick([[null], [{ exists: true }], [{ exists: false }]]);
    default:
      return pick([
        [word],
        [word, pick(strings)],
        [{ prefix: word.slice(0, 3) }],
        [{ suffix: word.slice(-2) }],
        [{ "equals-ignore-case": word.toUpperCase() }],
        [{ wildcard: `${word.slice(0, 2)}*` }],
        [{ "anything-but": word }],
        [{ "anything-but": [word, pick(strings)] }],
        [{ "anything-but": { prefix: word.slice(0, 2) } }],
        [{ "anything-but": { suffix: word.slice(-1) } }],
        [{ exists: random.nextFloat() < 0.5 }],
      ]);
  }
}

function randomPattern(random: SeededRandom): EventPattern {
  const fields = ["s", "num", "flag", "ip", "tags", "opt"].filter(() => random.nextFloat() < 0.35);
  const detail: Record<string, unknown> = {};
  for (const field of fields.length ? fields : ["s"]) detail[field] = randomLeaf(random, field);
  if (random.nextFloat() < 0.25) detail.nested = { k: randomLeaf(random, "k") };
  if (random.nextFloat() < 0.2)
    detail.$or = [{ s: randomLeaf(random, "s") }, { num: randomLeaf(random, "num") }];
  return { source: ["xcheck"], detail };
}

describe.skipIf(!motoAvailable)("the local pattern matcher against moto's EventBridge", () => {
  it("delivers exactly the same pattern/event pairs", async () => {
    const config = { endpoint, region: "us-east-1", credentials: { accessKeyId: "x", secretAccessKey: "x" } };
    const events = new EventBridgeClient(config);
    const sqs = new SQSClient(config);
    const random = new SeededRandom(2026);
    await events.send(new CreateEventBusCommand({ Name: "xcheck" }));
    const patterns = Array.from({ length: PATTERNS }, () => randomPattern(random));
    const queues: string[] = [];
    for (const [i, pattern] of patterns.entries()) {
      const queue = await sqs.send(new CreateQueueCommand({ QueueName: `xcheck-${i}` }));
      queues.push(queue.QueueUrl!);
      await events.send(
        new PutRuleCommand({
          Name: `rule-${i}`,
          EventBusName: "xcheck",
          EventPattern: JSON.stringify(pattern),
        }),
      );
      await events.send(
        new PutTargetsCommand({
          Rule: `rule-${i}`,
          EventBusName: "xcheck",
          Targets: [{ Id: "q", Arn: `arn:aws:sqs:us-east-1:123456789012:xcheck-${i}` }],
        }),
      );
    }
    const details = Array.from({ length: EVENTS * 10 }, (_, n) => randomDetail(random, n));
    for (let i = 0; i < details.length; i += 10) {
      await events.send(
        new PutEventsCommand({
          Entries: details.slice(i, i + 10).map((detail) => ({
            EventBusName: "xcheck",
            Source: "xcheck",
            DetailType: "Cross Check",
            Detail: JSON.stringify(detail),
          })),
        }),
      );
    }
    let pairs = 0;
    let matched = 0;
    const disagreements: string[] = [];
    for (const [i, pattern] of patterns.entries()) {
      const delivered = new Set<number>();
      for (;;) {
        const batch = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queues[i], MaxNumberOfMessages: 10 }),
        );
        if (!batch.Messages?.length) break;
        for (const m of batch.Messages)
          delivered.add((JSON.parse(m.Body!) as { detail: { n: number } }).detail.n);
      }
      for (const detail of details) {
        pairs++;
        const local = matchesPattern(pattern, { source: "xcheck", "detail-type": "Cross Check", detail });
        if (local) matched++;
        if (local !== delivered.has(detail.n as number)) {
          disagreements.push(
            `${JSON.stringify(pattern.detail)} vs ${JSON.stringify(detail)}: local ${local}`,
          );
        }
      }
    }
    console.log(
      `pattern cross-check: ${pairs} pattern/event pairs, ${matched} matches, ${disagreements.length} disagreements with moto`,
    );
    expect(disagreements.slice(0, 5)).toEqual([]);
    // The generated set exercises both outcomes.
    expect(matched).toBeGreaterThan(pairs * 0.05);
    expect(matched).toBeLessThan(pairs * 0.95);
  }, 300_000);
});

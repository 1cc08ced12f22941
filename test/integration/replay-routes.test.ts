/**
 * `decide replay` as a user runs it, on the local SQS and the local bus: a dry run counts every
 * letter that stays, filtered or not; a letter the queue dead-lettered keeps the time it was first
 * sent (so --older-than means what it says); a review queue's letters go back to the review queue
 * (re-send and SQS's redrive); a rule's undelivered event goes to that rule's target queue, as the
 * rule would have delivered it (a pipeline event only after a check against its decision record:
 * `forged-events.test.ts`); job failures are listed, never moved.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEventBus, startEventBus } from "../../infra/local/event-bus.ts";
import { redriveTo, ruleDeadLetter } from "../../infra/local/local-queues.ts";
import { type LocalSqs, startLocalSqs } from "../../infra/local/sqs/sqs-server.ts";
import { eventBridgeClient, localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { EventPublisher } from "../../shared/adapters/event-publisher.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import type { DeadLetterRoutes } from "../../shared/domain/dead-letters.ts";
import { DetailType } from "../../shared/domain/events.ts";
import { EVENT_PUBLISHING, RULES } from "../../shared/domain/topology.ts";
import { runDecide } from "../helpers/decide-cli.ts";

let localSqs: LocalSqs;
let bus: LocalEventBus;
let env: NodeJS.ProcessEnv;
const q: Record<string, SqsQueue> = {};

beforeAll(async () => {
  localSqs = await startLocalSqs({ port: 0, hostname: "127.0.0.1" });
  const endpoint = localSqs.endpoint;
  const sqs = sqsClient(localServiceOptions(endpoint));
  for (const name of ["intake-dlq", "review-dlq", "human-rule-dlq", "requested-rule-dlq", "job-failures"])
    q[name] = await SqsQueue.create(sqs, name);
  q.intake = await SqsQueue.create(sqs, "intake", redriveTo("intake-dlq", 5));
  // One receive, then a dead letter: the review queue's visibility gives the letter a known age.
  q.review = await SqsQueue.create(sqs, "review", { VisibilityTimeout: "2", ...redriveTo("review-dlq", 1) });
  bus = await startEventBus({ name: "decisions", deliveryAttempts: 2 });
  bus.addRule({
    name: "requested",
    pattern: RULES.requested.pattern,
    target: async () => {
      throw new Error("the intake queue is unreachable");
    },
    deadLetter: ruleDeadLetter(q["requested-rule-dlq"]!, "requested", "intake"),
  });
  const routes: DeadLetterRoutes = {
    intake: { dlqUrl: q["intake-dlq"]!.url, queueUrl: q.intake.url },
    review: { dlqUrl: q["review-dlq"]!.url, queueUrl: q.review.url },
    "human-rule": { dlqUrl: q["human-rule-dlq"]!.url, queueUrl: q.review.url },
    "requested-rule": { dlqUrl: q["requested-rule-dlq"]!.url, queueUrl: q.intake.url, deliver: "detail" },
    "job-failures": { dlqUrl: q["job-failures"]!.url },
  };
  env = {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_SQS: endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    DEAD_LETTER_ROUTES: JSON.stringify(routes),
    DECISIONS_TABLE: "",
  };
}, 60_000);

afterAll(async () => {
  await bus?.stop();
  await localSqs?.close();
});

const item = (id: string, policy: string) => JSON.stringify({ id, policy, state: `state of ${id}` });
/** The counts line (a dry run adds its note after it). */
const summary = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .findLast((line) => / matched, \d+ moved, /.test(line));

async function until(check: () => Promise<boolean>): Promise<void> {
  // Fails on lack of progress: the local SQS moves a letter within a few visibility timeouts.
  for (let i = 0; i < 600 && !(await check()); i++) await new Promise((r) => setTimeout(r, 100));
  expect(await check()).toBe(true);
}

describe("decide replay", () => {
  it("counts in a dry run every letter that stays in the queue, with and without a filter", async () => {
    for (const [id, policy] of [
      ["D-1", "ticket-routing"],
      ["D-2", "ticket-routing"],
      ["D-3", "content-moderation"],
    ] as const)
      await q["intake-dlq"]!.send(item(id, policy));
    const all = await runDecide(["replay", "--from", "intake", "--dry-run"], env);
    expect(summary(all.stdout)).toBe("3 matched, 0 moved, 3 left in the dead-letter queue");
    const some = await runDecide(
      ["replay", "--from", "intake", "--policy", "content-moderation", "--dry-run"],
      env,
    );
    expect(summary(some.stdout)).toBe("1 matched, 0 moved, 3 left in the dead-letter queue");
    const moved = await runDecide(["replay", "--from", "intake", "--policy", "content-moderation"], env);
    expect(summary(moved.stdout)).toBe("1 matched, 1 moved, 2 left in the dead-letter queue");
    const [back] = await q.intake!.receive();
    expect(JSON.parse(back!.body)).toMatchObject({ id: "D-3" });
  });

  it("keeps a dead letter's first-sent time and sends the review queue's letters back to it", async () => {
    await q.review!.send(item("R-1", "ticket-routing"));
    const sentBy = Date.now();
    expect(await q.review!.receive()).toHaveLength(1); // received once, never deleted: the limit is reached
    await until(async () => (await q["review-dlq"]!.depth()).visible === 1);
    const movedAt = Date.now();
    const [letter] = await q["review-dlq"]!.receive({ visibilitySeconds: 0 });
    expect(letter!.sentAt).toBeLessThanOrEqual(sentBy);
    expect(movedAt - letter!.sentAt).toBeGreaterThanOrEqual(2_000);
    // So --older-than selects it by the age it really has (two visibility timeouts at least).
    const old = await runDecide(["replay", "--from", "review", "--older-than", "2s", "--dry-run"], env);
    expect(old.stdout).toMatch(/would replay item R-1 policy=ticket-routing/);
    const redrive = await runDecide(["replay", "--all", "--from", "review"], env);
    expect(redrive.stdout).toMatch(/redrive started: task /);
    await until(async () => (await q.review!.depth()).visible === 1);
    const [home] = await q.review!.receive();
    expect(JSON.parse(home!.body)).toMatchObject({ id: "R-1" });
  });

  it("delivers a rule's undelivered event to the rule's target queue, as the rule would have", async () => {
    // An upstream producer's "Decision Requested" that the bus could not deliver to the intake.
    await new EventPublisher(eventBridgeClient(localServiceOptions(bus.endpoint)), bus.name, {
      ...EVENT_PUBLISHING,
      source: "shop.orders",
    }).publish([
      {
        detailType: DetailType.requested,
        eventKey: "req",
        detail: JSON.parse(item("Q-1", "ticket-routing")),
      },
    ]);
    await until(async () => (await q["requested-rule-dlq"]!.depth()).visible === 1);
    const listed = await runDecide(["replay", "--from", "requested-rule", "--dry-run"], env);
    expect(listed.stdout).toMatch(
      /would replay Decision Requested Q-1 policy=ticket-routing .*reason="LOCAL_DELIVERY_FAILED: the intake queue is unreachable"/,
    );
    const replayed = await runDecide(["replay", "--from", "requested-rule"], env);
    expect(summary(replayed.stdout)).toBe("1 matched, 1 moved, 0 left in the dead-letter queue");
    // The rule's input path: the item itself, not the event around it.
    let home: unknown[] = [];
    await until(async () => {
      home = [...home, ...(await q.intake!.receive()).map((m) => JSON.parse(m.body))];
      return home.some((body) => (body as { id?: string }).id === "Q-1");
    });
    expect(home.find((body) => (body as { id?: string }).id === "Q-1")).toEqual(
      JSON.parse(item("Q-1", "ticket-routing")),
    );
  });

  it("checks a pipeline event against its decision record, so it needs the table", async () => {
    await q["human-rule-dlq"]!.send(
      JSON.stringify({ source: "decision-pipeline", "detail-type": "Decision Made", detail: {} }),
    );
    const refused = await runDecide(["replay", "--from", "human-rule"], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/checked against its decision record before it goes; give --table/);
  });

  it("lists job failures and refuses to move them", async () => {
    await q["job-failures"]!.send(
      JSON.stringify({
        requestContext: {
          functionArn: "arn:aws:lambda:us-east-1:123456789012:function:Stack-Drift:$LATEST",
          condition: "RetriesExhausted",
        },
        responsePayload: { errorType: "Error", errorMessage: "table unreachable" },
      }),
    );
    const listed = await runDecide(["replay", "--from", "job-failures", "--dry-run"], env);
    expect(listed.stdout).toMatch(
      /would replay Stack-Drift run .*reason="RetriesExhausted: Error: table unreachable"/,
    );
    const refused = await runDecide(["replay", "--from", "job-failures"], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/"job-failures" letters are listed, not moved: add --dry-run/);
  });

  it("without --from, takes the intake's pair npm start exports, and assumes no home for a queue named by flag", async () => {
    await q["intake-dlq"]!.send(item("E-1", "env-defaults"));
    const exported = { ...env, DLQ_URL: q["intake-dlq"]!.url, INTAKE_QUEUE_URL: q.intake!.url };
    const named = await runDecide(
      ["replay", "--dlq-url", q["intake-dlq"]!.url, "--policy", "env-defaults"],
      exported,
    );
    expect(named.code).toBe(2);
    expect(named.stderr).toMatch(/--queue-url is required \(where the letters go home\)/);
    const moved = await runDecide(["replay", "--policy", "env-defaults"], exported);
    expect(summary(moved.stdout)).toMatch(/^1 matched, 1 moved, \d+ left in the dead-letter queue$/);
    let home: unknown[] = [];
    await until(async () => {
      home = [...home, ...(await q.intake!.receive()).map((m) => JSON.parse(m.body))];
      return home.some((body) => (body as { id?: string }).id === "E-1");
    });
  });
});

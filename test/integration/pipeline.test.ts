/**
 * The decide path end to end on real local services: items sent to SQS are decided by the real
 * endpoint, stored in DynamoDB Local, and routed through the local bus; invalid items are
 * rejected once; duplicates are not decided or routed twice.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type LocalPipeline, sendBodies, startLocalPipeline } from "../helpers/local-pipeline.ts";
import { REPO_ROOT } from "../helpers/models.ts";

let pipeline: LocalPipeline;

beforeAll(async () => {
  pipeline = await startLocalPipeline();
}, 120_000);
afterAll(async () => {
  await pipeline?.stop();
});

async function send(bodies: string[]): Promise<void> {
  await sendBodies(pipeline.intake, bodies);
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the pipeline");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("decide pipeline on local services", () => {
  it("decides, stores and routes the sample items exactly once, and rejects bad ones with reasons", async () => {
    const samples = (await readFile(join(REPO_ROOT, "events", "items", "samples.jsonl"), "utf8"))
      .trim()
      .split("\n");
    const invalid = [
      "{not json",
      JSON.stringify({ id: "BAD-1", policy: "ticket-routing", state: "" }),
      JSON.stringify({ id: "BAD-2", policy: "no-such-policy", state: "hello" }),
    ];
    // Every sample twice: SQS delivers at least once, and upstream systems resend.
    await send([...samples, ...invalid, ...samples]);
    await until(async () => (await pipeline.depth(pipeline.intake)) === 0);
    await pipeline.bus.idle();

    const made = pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Made");
    const ids = made.map((e) => e.detail.itemId as string);
    expect(new Set(ids).size).toBe(ids.length); // nothing routed twice
    expect(ids.sort()).toEqual(samples.map((s) => JSON.parse(s).id as string).sort());
    expect(pipeline.routed.auto.length + pipeline.routed.human.length).toBe(samples.length);

    for (const line of samples) {
      const item = JSON.parse(line) as { id: string; policy: string };
      const policy = pipeline.deps.policies.current(item.policy)!;
      const record = await pipeline.deps.store.get({
        itemId: item.id,
        policyId: policy.id,
        policyVersion: policy.version,
      });
      expect(record?.eventPublished).toBe(true);
      expect(["auto_approved", "pending_review"]).toContain(record?.status);
      // DynamoDB maps keep no key order; the policy version gives the option order.
      expect(Object.keys(record!.distribution!).sort()).toEqual(policy.options.map((o) => o.id).sort());
      expect(Object.values(record!.distribution!).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
      expect(record?.modelSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(record?.promptVersion).toBe("direct-options/policy-first@1");
      const event = made.find((e) => e.detail.itemId === item.id)!;
      expect(event.detail.route).toBe(record?.route);
      expect(event.detail.chosen).toBe(record?.chosen);
      if (record?.route === "auto")
        expect(record.topProbability).toBeGreaterThanOrEqual(policy.autoThreshold);
      if (policy.predictionSet) {
        // The conformal set: every option at or above the policy's cut-off (the top one at least).
        const cut = policy.predictionSet.minProbability;
        const expected = Object.entries(record!.distribution!).flatMap(([id, p]) => (p >= cut ? [id] : []));
        expect(record?.predictionSet?.sort()).toEqual(
          (expected.length ? expected : [record!.chosen!]).sort(),
        );
      } else {
        expect(record?.predictionSet).toBeUndefined();
      }
    }

    const rejected = pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Rejected");
    expect(rejected).toHaveLength(3);
    const bad1 = rejected.find((e) => e.detail.itemId === "BAD-1")!;
    expect(bad1.detail.problems).toEqual([{ field: "state", message: "must not be empty" }]);
    const bad2 = rejected.find((e) => e.detail.itemId === "BAD-2")!;
    expect((bad2.detail.problems as { message: string }[])[0]!.message).toMatch(
      /unknown policy "no-such-policy"/,
    );
    expect(rejected.some((e) => String(e.detail.itemId).startsWith("invalid-"))).toBe(true);
    expect(await pipeline.depth(pipeline.deadLetters)).toBe(0);
  });

  it("lists escalated items in the review queue", async () => {
    const queue = await pipeline.deps.store.pageReviewQueue({
      policyIds: pipeline.deps.policies.ids(),
      limit: 500,
      countCap: 1000,
    });
    expect(queue.records.length).toBe(pipeline.routed.human.length);
    expect(queue.total).toBe(pipeline.routed.human.length);
    expect(queue.records.every((record) => record.route === "human" && record.reason !== "confident")).toBe(
      true,
    );
  });
});

describe("targets", () => {
  it("applies each automatic decision once, even when its event arrives twice", async () => {
    const { createAutoActionHandler } = await import("../../functions/auto-action.ts");
    const { sharedDependencies } = await import("../../functions/support/dependencies.ts");
    const { localLambdaContext } = await import("../../infra/local/sqs/sqs-poller.ts");
    await pipeline.bus.idle();
    const actioned = pipeline.bus.events.filter((e) => e["detail-type"] === "Item Actioned");
    expect(actioned.map((e) => e.detail.itemId).sort()).toEqual(
      pipeline.routed.auto.map((e) => e.detail.itemId).sort(),
    );
    for (const event of pipeline.routed.auto) {
      const record = await pipeline.deps.store.get(event.detail as never);
      expect(record?.status).toBe("actioned");
      expect(record?.action).toBe(`${event.detail.policyId}:${event.detail.chosen}`);
    }
    if (pipeline.routed.auto.length > 0) {
      const again = await createAutoActionHandler(() => sharedDependencies(pipeline.env))(
        pipeline.routed.auto[0] as never,
        localLambdaContext("auto-action"),
      );
      expect(again).toEqual({ outcome: "already_actioned" });
      await pipeline.bus.idle();
      expect(pipeline.bus.events.filter((e) => e["detail-type"] === "Item Actioned")).toHaveLength(
        actioned.length,
      );
    }
  });

  it("stores a reviewer's answer once, refuses a wrong or conflicting one, and lists the queue", async () => {
    const { createReviewHandler } = await import("../../functions/review.ts");
    const { sharedDependencies } = await import("../../functions/support/dependencies.ts");
    const { localLambdaContext } = await import("../../infra/local/sqs/sqs-poller.ts");
    const review = createReviewHandler(() => sharedDependencies(pipeline.env), pipeline.env);
    // What the HTTP API's Lambda authorizer hands the function for a verified token.
    const ana = { sub: "sub-ana", name: "Ana", groups: JSON.stringify(["reviewers"]) };
    const call = async (
      method: string,
      body?: unknown,
      who: Record<string, string> | null = ana,
      query?: Record<string, string>,
    ) =>
      (await review(
        {
          requestContext: { http: { method }, ...(who ? { authorizer: { lambda: who } } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
          ...(query ? { queryStringParameters: query } : {}),
        } as never,
        localLambdaContext("review"),
      )) as { statusCode: number; body: string };
    expect((await call("GET", undefined, null)).statusCode).toBe(401);
    expect((await call("GET", undefined, ana, { limit: "0" })).statusCode).toBe(422);
    expect((await call("GET", undefined, ana, { cursor: "not-a-cursor" })).statusCode).toBe(422);
    const queue = JSON.parse((await call("GET")).body) as {
      items: { itemId: string; policyId: string; policyVersion: number; reason: string }[];
      total: number;
    };
    expect(queue.items.length).toBeGreaterThan(0);
    expect(queue.total).toBeGreaterThanOrEqual(queue.items.length);
    // One reviewer's label is final (audit samples under a two-reviewer policy are tested apart).
    const target = queue.items.find(
      (i) =>
        i.reason !== "audit_sample" ||
        pipeline.deps.policies.version(i.policyId, i.policyVersion)?.auditReviewers === 1,
    )!;
    const policy = pipeline.deps.policies.version(target.policyId, target.policyVersion)!;
    const label = policy.options[0]!.id;
    const answer = {
      itemId: target.itemId,
      policyId: target.policyId,
      policyVersion: target.policyVersion,
      label,
    };
    // The reviewer comes from the token, never from the body.
    const named = await call("POST", { ...answer, reviewer: "mallory" });
    expect(named.statusCode).toBe(422);
    expect(named.body).toMatch(/reviewer/);
    expect((await call("POST", answer)).statusCode).toBe(201);
    expect((await call("POST", answer)).statusCode).toBe(200);
    const conflicting = await call("POST", { ...answer, label: policy.options[1]!.id });
    expect(conflicting.statusCode).toBe(409);
    const wrong = await call("POST", { ...answer, label: "no-such-option" });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.body).toMatch(/not an option/);
    expect((await call("POST", { ...answer, policyVersion: "one" })).statusCode).toBe(422);
    // Someone else may not change Ana's label; Ana may, within the window.
    const bo = { sub: "sub-bo", name: "Bo", groups: JSON.stringify(["reviewers"]) };
    const other = policy.options[1]!.id;
    expect((await call("POST", { ...answer, label: other, action: "change" }, bo)).statusCode).toBe(403);
    expect((await call("POST", { ...answer, label: other, action: "change" })).statusCode).toBe(201);
    await pipeline.bus.idle();
    const reviewed = pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Reviewed");
    expect(reviewed).toHaveLength(1);
    expect(reviewed[0]!.detail).toMatchObject({
      itemId: target.itemId,
      label,
      reviewer: "Ana",
      reviewerId: "sub-ana",
    });
    const revised = pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Review Revised");
    expect(revised.map((e) => e.detail)).toMatchObject([
      { itemId: target.itemId, action: "change", previousLabel: label, label: other, reviewerId: "sub-ana" },
    ]);
    const record = await pipeline.deps.store.get(answer);
    expect(record).toMatchObject({
      status: "reviewed",
      label: other,
      reviewer: "Ana",
      reviewEventPublished: true,
    });
    expect(record?.reviewHistory?.map((e) => e.action)).toEqual(["label", "change"]);
  });
});

describe("scheduled drift check", () => {
  it("compares the stored decisions with each policy's baseline and emits Calibration Drift", async () => {
    const { runDriftCheck } = await import("../../shared/use-cases/drift-check.ts");
    const { PolicyRegistry } = await import("../../shared/domain/policy/registry.ts");
    const current = pipeline.deps.policies.current("ticket-routing")!;
    // A baseline no real run matches: every decision certain, all billing, nothing escalated.
    const skewed = {
      ...current,
      baseline: { meanConfidence: 1, escalationRate: 0, optionMix: [1, 0, 0, 0] },
    };
    const policies = new PolicyRegistry([skewed]);
    const results = await runDriftCheck(
      { policies, store: pipeline.deps.store, publisher: pipeline.deps.publisher },
      { minimumDecisions: 1 },
    );
    expect(results).toEqual([{ policyId: "ticket-routing", decisions: 4, drifted: true }]);
    await pipeline.bus.idle();
    const drift = pipeline.bus.events.filter((e) => e["detail-type"] === "Calibration Drift");
    expect(drift).toHaveLength(1);
    expect(drift[0]!.detail).toMatchObject({ policyId: "ticket-routing", policyVersion: 1, decisions: 4 });
  });
});

describe("calibration from reviewed decisions", () => {
  it("reads the reviewers' labels of the current policy version from the decisions table", async () => {
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const { mkdtemp } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const policy = pipeline.deps.policies.current("pre-screen")!;
    const now = new Date().toISOString();
    for (let i = 0; i < 30; i++) {
      const label = i % 3 === 0 ? "false" : "true";
      await pipeline.deps.store.create({
        itemId: `REVIEWED-${i}`,
        policyId: policy.id,
        policyVersion: policy.version,
        status: "reviewed",
        route: "human",
        chosen: "true",
        rawLogits: policy.options.map((o) => (o.id === label ? 1.5 + (i % 5) / 5 : 0)),
        // Wrong decisions (the model chose true, the label is false) held less of the mass.
        allowedTokenMass: label === "false" ? 0.3 + (i % 5) / 100 : 0.9 + (i % 5) / 100,
        label,
        reviewer: "ana",
        // Ten were audit samples reviewed twice; the second reviewer disagreed on three.
        ...(i < 10
          ? {
              firstReview: { label, reviewerId: "bo", reviewerName: "Bo", at: now },
              ...(i < 3 ? { disputed: true } : {}),
            }
          : {}),
        createdAt: now,
        updatedAt: now,
        eventPublished: true,
      });
    }
    const out = await mkdtemp(join(tmpdir(), "calibrate-table-"));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        join(REPO_ROOT, "bin", "decide.js"),
        "calibrate",
        "--table",
        pipeline.env.DECISIONS_TABLE!,
        "--policy",
        "pre-screen",
        "--out",
        out,
      ],
      { cwd: REPO_ROOT, env: { ...process.env, ...pipeline.env } },
    );
    expect(stdout).toMatch(/pre-screen: 30 labels/);
    expect(stdout).toContain("Reviewer agreement: 7 of 10 audit samples reviewed twice got the same label");
    expect(stdout).toMatch(
      /off-options guard: minAllowedTokenMass 0\.[3-8]\d*: sends 100\.0% of the wrong decisions and 0\.0% of the right ones/,
    );
  });
});

describe("review page behind the review function", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  it("answers an HTTP API request from a verified reviewer with the queue, and sends others to sign in", async () => {
    // The Lambda entry point reads the process environment, as in Lambda.
    for (const [name, value] of Object.entries(pipeline.env)) vi.stubEnv(name, value);
    const { handler } = await import("../../functions/review-page.ts");
    const event = (authorizer?: Record<string, string>) => ({
      version: "2.0",
      routeKey: "$default",
      rawPath: "/",
      rawQueryString: "",
      headers: { host: "review.execute-api.us-east-1.amazonaws.com", accept: "text/html" },
      requestContext: {
        ...(authorizer ? { authorizer: { lambda: authorizer } } : {}),
        http: { method: "GET", path: "/", protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "test" },
        domainName: "review.execute-api.us-east-1.amazonaws.com",
        stage: "$default",
        requestId: "1",
        routeKey: "$default",
        accountId: "123456789012",
        apiId: "x",
        domainPrefix: "review",
        time: "",
        timeEpoch: 0,
      },
      isBase64Encoded: false,
    });
    type Answer = { statusCode: number; body: string; headers?: Record<string, string> };
    const signedIn = (await handler(
      event({ sub: "s1", name: "Ana", groups: JSON.stringify(["reviewers"]) }) as never,
      {} as never,
    )) as Answer;
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.body).toMatch(/<h1>Review queue \(\d+ waiting\)<\/h1>/);
    expect(signedIn.body).toContain("Signed in as <strong>Ana</strong>");
    const anonymous = (await handler(event() as never, {} as never)) as Answer;
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers?.location).toBe("/auth/login");
    const outsider = (await handler(
      event({ sub: "s2", name: "Eve", groups: "[]" }) as never,
      {} as never,
    )) as Answer;
    expect(outsider.statusCode).toBe(403);
  });
});

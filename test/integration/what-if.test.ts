/**
 * `decide what-if` on the local stack: decisions written by the real decide path (the demo model
 * in process, DynamoDB Local), some labelled by the review use case, then a candidate version
 * compared by the CLI as a user runs it: re-scored in process, from the stored logits (the same
 * answers: the prompt is unchanged), refused from stored logits when the prompt changes, and read
 * from the shadow records the decide path wrote for a candidate version.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcessSource } from "../../cli/calibrate/calibrate-in-process.ts";
import type { ScoringSource } from "../../cli/calibrate/calibrate-source.ts";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { demoModelPath, REPO_ROOT } from "../helpers/models.ts";

let dynamo: LocalDynamoDb;
let source: ScoringSource;
let model: string;
let dir: string;
let env: NodeJS.ProcessEnv;
const v1 = JSON.parse(
  await readFile(join(REPO_ROOT, "events", "policies", "ticket-routing.v1.json"), "utf8"),
) as Record<string, unknown>;
/** The candidate: a lower threshold (it would automate more) and an offset toward "account" (flips). */
const candidate = { ...v1, version: 2, autoThreshold: 0.6, optionBias: [0, 0, 3, 0] };
let items: { id: string; state: unknown; label: string }[];

/** Decides `items` under `policiesDir`'s policies into `table`, and labels every escalated one. */
async function decideAndLabel(table: string, policiesDir: string): Promise<void> {
  await ensureDecisionsTable(dynamo.endpoint, table);
  const store = new DynamoDbDecisionStore(documentClient(localServiceOptions(dynamo.endpoint)), table);
  const policies = await PolicyRegistry.fromFolder(policiesDir);
  const deps = {
    policies,
    store,
    endpoint: source.endpoint,
    publisher: { publish: async () => undefined },
    publishLeaseMs: 60_000,
    now: () => new Date(),
  };
  for (const item of items)
    await decideMessage(JSON.stringify({ id: item.id, policy: "ticket-routing", state: item.state }), deps);
  const review = { ...deps, timings: { claimMs: 60_000, changeWindowMs: 60_000 } };
  const reviewer = { id: "ana", name: "Ana", groups: ["reviewers"] };
  for (const item of items.slice(0, 30)) {
    const record = await store.latest(item.id, "ticket-routing");
    if (record?.status === "pending_review")
      await labelItem({ ...record, label: item.label }, reviewer, review);
  }
}

beforeAll(async () => {
  model = await demoModelPath();
  source = await inProcessSource(model);
  dynamo = await startDynamoDbLocal({ port: await freePort() });
  dir = await mkdtemp(join(tmpdir(), "what-if-"));
  env = {
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
  };
  const lines = ["demo-heldout.jsonl", "demo-dev.jsonl"].flatMap(async (f) =>
    (await readFile(join(REPO_ROOT, "events", "items", f), "utf8")).split("\n").filter(Boolean),
  );
  items = (await Promise.all(lines))
    .flat()
    .map((l) => JSON.parse(l) as { policy: string; state: unknown; label: string })
    .filter((l) => l.policy === "ticket-routing")
    .map((l, i) => ({ id: `WI-${i}`, state: l.state, label: l.label }));
  await writeFile(join(dir, "candidate.json"), JSON.stringify(candidate));
  await decideAndLabel("what-if", join(REPO_ROOT, "events", "policies"));
}, 600_000);

afterAll(async () => {
  await source?.close();
  await dynamo?.stop();
});

const whatIf = (args: string[]) =>
  runDecide(["what-if", "--from-table", "what-if", "--since", "2020-01-01", ...args], env);

/** The JSON summary a run wrote into `out`. */
const summaryIn = async (out: string) =>
  JSON.parse(await readFile(join(out, "ticket-routing.what-if.json"), "utf8")) as {
    sampled: number;
    coverage: { live: number; candidate: number };
    flipped: { items: number };
    toAuto: { items: number };
    labelled: { items: number; automated: number; wrong: number; upperBound: number };
    cost: { calls: number };
  };

describe("decide what-if on decisions the decide path wrote", () => {
  it("re-scores a sample in process and reports the flips, coverage, labelled bound and cost", async () => {
    const out = join(dir, "rescored");
    const run = await whatIf(["--candidate", join(dir, "candidate.json"), "--model", model, "--out", out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/what-if of candidate v2 against live v1: \d+ sampled of \d+ decisions/);
    expect(run.stdout).toMatch(
      /coverage \(share automated, audit samples included\): \d+\.\d% -> \d+\.\d%; of them audit samples \(people label them first\): \d+\.\d% -> \d+\.\d%/,
    );
    expect(run.stdout).toMatch(/escalations per day: [\d.]+ -> [\d.]+/);
    expect(run.stdout).toMatch(/s per 1,000 decisions \(wall\), endpoint busy [\d.]+ s per 1,000/);
    expect(run.stdout).toMatch(/\$[\d.]+ per 1,000 decisions at \$0\.238\/hour/);
    const summary = await summaryIn(out);
    expect(summary.sampled).toBe(items.length);
    expect(summary.cost.calls).toBe(items.length);
    // A lower threshold automates at least as much, and the items it takes over were escalated.
    expect(summary.coverage.candidate).toBeGreaterThanOrEqual(summary.coverage.live);
    expect(summary.labelled.items).toBeGreaterThan(0);
    expect(summary.labelled.upperBound).toBeGreaterThan(0);
    const report = await readFile(join(out, "ticket-routing.what-if.html"), "utf8");
    expect(report).toContain('id="what-if-summary"');
    expect(report).toContain("What-if: ticket-routing version 1 → candidate version 2");
    expect(summary.flipped.items).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/ -> account: \d+ \(est\. \d+\)/);
    expect(report).toContain('id="flips"');
    expect(report).toContain('id="changed"');
  });

  it("gives the same answers from the stored logits without an endpoint call, and a bounded sample", async () => {
    const [rescored, stored] = [join(dir, "rescored"), join(dir, "stored")];
    const run = await whatIf(["--candidate", join(dir, "candidate.json"), "--out", stored]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("answers: the stored raw logits (the prompt is unchanged)");
    expect(run.stdout).toContain("cost: no endpoint call");
    const [a, b] = [await summaryIn(rescored), await summaryIn(stored)];
    expect(b.cost.calls).toBe(0);
    expect({ ...b, cost: undefined }).toEqual({ ...a, cost: undefined });
    const small = await whatIf([
      "--candidate",
      join(dir, "candidate.json"),
      "--sample",
      "10",
      "--out",
      join(dir, "small"),
    ]);
    expect(small.code, small.stderr).toBe(0);
    expect((await summaryIn(join(dir, "small"))).sampled).toBeLessThanOrEqual(10 + 4);
  });

  it("refuses stored logits for a candidate that changes the prompt, naming the field", async () => {
    await writeFile(
      join(dir, "reworded.json"),
      JSON.stringify({ ...candidate, question: "Which team, really?" }),
    );
    const run = await whatIf(["--candidate", join(dir, "reworded.json")]);
    // A calling mistake (a scoring flag is missing): exit 2 and where the usage is.
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /changes the prompt \(question\) of v1: its stored logits do not apply; give --model/,
    );
    expect(run.stderr).toContain("see: npx decide what-if --help");
  });

  it("refuses the live version answered from its own stored logits: nothing could change", async () => {
    const run = await whatIf([
      "--candidate",
      join(REPO_ROOT, "events", "policies", "ticket-routing.v1.json"),
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the candidate is ticket-routing v1 as it is live: nothing would change");
  });

  it("reads the shadow records the decide path wrote for a candidate version", async () => {
    const policiesDir = await mkdtemp(join(tmpdir(), "what-if-policies-"));
    const shadowed = { ...v1, shadow: { version: 2, share: 1 } };
    await writeFile(join(policiesDir, "ticket-routing.v1.json"), JSON.stringify(shadowed));
    await writeFile(
      join(policiesDir, "ticket-routing.v2.json"),
      JSON.stringify({ ...candidate, candidate: true }),
    );
    await decideAndLabel("what-if-shadow", policiesDir);
    const out = join(dir, "shadow");
    const run = await runDecide(
      [
        "what-if",
        ...["--from-table", "what-if-shadow", "--since", "2020-01-01", "--from-shadow"],
        ...[
          "--candidate",
          join(policiesDir, "ticket-routing.v2.json"),
          "--policies-dir",
          policiesDir,
          "--out",
          out,
        ],
      ],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("answers: the stored shadow answers");
    const fromShadow = await summaryIn(out);
    expect(fromShadow.sampled).toBe(items.length);
    expect(fromShadow.cost.calls).toBe(0);
    // The shadow answered on the same model as the re-scoring: the same comparison.
    const rescored = await summaryIn(join(dir, "rescored"));
    expect(fromShadow.coverage).toEqual(rescored.coverage);
    expect(fromShadow.flipped).toEqual(rescored.flipped);
  });

  it("against an endpoint that stays busy, ends in one line saying so, with no stack (issue 36, observation 7)", async () => {
    // A busy endpoint is a fault a real one cannot be held in on demand: this one answers every
    // call as the container does when its admission queue is full.
    let calls = 0;
    const busy = createServer((_request, response) => {
      calls++;
      response.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
      response.end(
        JSON.stringify({
          error: { type: "overloaded_error", code: "queue_full", message: "the admission queue is full" },
        }),
      );
    });
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(busy.address() as AddressInfo).port}`;
      const run = await whatIf([
        ...["--candidate", join(dir, "candidate.json"), "--url", url, "--concurrency", "1"],
        ...["--out", join(dir, "busy")],
      ]);
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      // The --url client tries a busy server again itself, then reports it unavailable.
      expect(run.stderr).toMatch(
        /^decide what-if: the endpoint failed \(.* answered 503: .*queue_full.*\) on item WI-\d+, after 0 of \d+ answers: nothing was written; try again later or with a lower --concurrency$/m,
      );
      expect(run.stderr).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(calls).toBeGreaterThan(1);
    } finally {
      busy.close();
    }
  });
});

/**
 * Calibration from the decisions table on DynamoDB Local, through the CLI as a user runs it: too
 * few labels is a one-line usage error; an audit sample two reviewers disagreed on counts as
 * reviewed twice; `--propose --max-auto-error` certifies the threshold on the model and prompt
 * layout the labelled decisions name, `--apply-proposal` takes it after recomputing it on those
 * labels, and `decide status` says the certificate is verified (recomputed on its labels in the
 * table), then, once another model decides, "certificate stale: model changed".
 */
import { cp, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const MODEL = "a".repeat(64);
const LAYOUT = "choice-v1@policy-first";
const OPTIONS = ["billing", "technical", "account", "out_of_scope"];

let dynamo: LocalDynamoDb;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dynamo = await startDynamoDbLocal({ port: await freePort() });
  env = {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
  };
}, 120_000);

afterAll(async () => {
  await dynamo?.stop();
});

/** A fresh table and a copy of the policies folder. */
async function setting(table: string) {
  await ensureDecisionsTable(dynamo.endpoint, table);
  const dir = await mkdtemp(join(tmpdir(), "calibration-table-"));
  const policies = join(dir, "policies");
  await cp(join(REPO_ROOT, "events", "policies"), policies, { recursive: true });
  const store = new DynamoDbDecisionStore(documentClient(localServiceOptions(dynamo.endpoint)), table);
  return { dir, policies, store };
}

/** A decided (and, with a label, reviewed) ticket-routing record scored by `model`. */
function record(i: number, label: string | undefined, logits: number[], model = MODEL): DecisionRecord {
  const at = new Date(Date.UTC(2026, 10, 30, 10, 0, i)).toISOString();
  return {
    itemId: `T-${i}`,
    policyId: "ticket-routing",
    policyVersion: 1,
    status: label ? "reviewed" : "auto_approved",
    route: label ? "human" : "auto",
    reason: label ? "below_threshold" : "confident",
    chosen: OPTIONS[logits.indexOf(Math.max(...logits))]!,
    rawLogits: logits,
    modelSha256: model,
    promptVersion: LAYOUT,
    ...(label ? { label, reviewedAt: at } : {}),
    createdAt: at,
    updatedAt: at,
    eventPublished: true,
  };
}

describe("calibration from the decisions table", () => {
  it("refuses fewer than 10 labels with one line and no stack", async () => {
    const { policies, store } = await setting("few");
    for (let i = 0; i < 3; i++) await store.create(record(i, "billing", [3, 0, 0, 0]));
    const run = await runDecide(
      ["calibrate", "--from-table", "few", "--policy", "ticket-routing", "--policies-dir", policies],
      env,
    );
    expect(run.code).toBe(2);
    expect(run.stderr.split("\n")[0]).toBe(
      "decide calibrate: ticket-routing: 3 labelled rows fit the policy; calibration needs at least 10",
    );
    expect(run.stderr).not.toMatch(/RangeError|\n\s+at /);
  });

  it("counts an audit sample two reviewers disagreed on as reviewed twice", async () => {
    const { dir, policies, store } = await setting("disputed");
    for (let i = 0; i < 12; i++)
      await store.create(record(i, OPTIONS[i % 4], [i % 4 === 0 ? 3 : 0, 1, 0, 0]));
    const first = { label: "billing", reviewerId: "r1", reviewerName: "Ann", at: "2026-11-30T11:00:00.000Z" };
    await store.create({
      ...record(20, "billing", [3, 0, 0, 0]),
      reason: "audit_sample",
      firstReview: first,
    });
    const pending = record(21, undefined, [3, 0, 0, 0]);
    await store.create({
      ...pending,
      status: "pending_review",
      route: "human",
      reason: "audit_sample",
      firstReview: first,
      disputed: true,
    });
    const run = await runDecide(
      [
        "calibrate",
        "--from-table",
        "disputed",
        "--policy",
        "ticket-routing",
        "--policies-dir",
        policies,
        "--out",
        dir,
      ],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /Reviewer agreement: 1 of 2 audit samples reviewed twice got the same label .*; 1 disputed/,
    );
    expect(await readFile(join(dir, "ticket-routing.report.html"), "utf8")).toMatch(
      /1 of 2 audit samples reviewed twice/,
    );
  });

  it("certifies from reviewers' labels, applies the certificate, and flags it once another model decides", async () => {
    const { dir, policies, store } = await setting("certified");
    // 600 labels: the model is right 99% of the time when sure (logit gap 6), 70% when not (gap 1).
    const random = new SeededRandom(5);
    for (let i = 0; i < 600; i++) {
      const sure = i % 2 === 0;
      const truth = i % 3;
      const right = random.nextFloat() < (sure ? 0.99 : 0.7);
      const chosen = right ? truth : (truth + 1) % 3;
      const logits = [0, 0, 0, -4].map((l, k) => (k === chosen ? (sure ? 6 : 1) : l));
      await store.create(record(i, OPTIONS[truth], logits));
    }
    const out = join(dir, "out");
    const proposed = await runDecide(
      [
        "calibrate",
        "--from-table",
        "certified",
        "--propose",
        "--min-labels",
        "10",
        "--max-auto-error",
        "0.05",
        "--policies-dir",
        policies,
        "--out",
        out,
      ],
      env,
    );
    expect(proposed.code, proposed.stderr).toBe(0);
    const line = proposed.stdout.match(
      /auto threshold (0\.\d+): wrong automatic actions ≤ 5\.0% with 95% confidence \(observed (\d+) of (\d+) automated, coverage (\d+\.\d)%; labels: 300 escalations\)/,
    );
    expect(line, proposed.stdout).not.toBeNull();
    const file = join(out, "ticket-routing", "v2-from-600-labels-max-error-0.05-at-0.95", "policy.json");
    const proposal = parsePolicy(JSON.parse(await readFile(file, "utf8")));
    expect(proposal.autoThreshold).toBe(Number(line![1]));
    expect(proposal.certificate).toMatchObject({
      maxError: 0.05,
      confidence: 0.95,
      modelSha256: MODEL,
      promptVersion: LAYOUT,
      labels: 600,
      automated: Number(line![3]),
    });
    const applied = await runDecide(
      ["calibrate", "--apply-proposal", file, "--policies-dir", policies, "--from-table", "certified"],
      env,
    );
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/^ {2}certificate \(none\) -> ≤ 5\.0% wrong at 95% confidence/m);
    expect(applied.stdout).toMatch(
      /^ {2}certificate verified \(learn-then-test on the labels held, not pre-registered\): recomputed on its 600 labels in certified$/m,
    );

    const status = async () => {
      const run = await runDecide(
        ["status", "--table", "certified", "--policies-dir", policies, "--json"],
        env,
      );
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { certificates: Record<string, string> }).certificates[
        "ticket-routing@2"
      ];
    };
    await store.create({ ...record(700, undefined, [6, 0, 0, 0]), policyVersion: 2 });
    expect(await status()).toBe(
      `certificate verified (learn-then-test on the labels held, not pre-registered): recomputed on its 600 labels in the table (${MODEL.slice(0, 12)}…, ${LAYOUT})`,
    );
    await store.create({
      ...record(701, undefined, [6, 0, 0, 0], "f".repeat(64)),
      policyVersion: 2,
      createdAt: "2026-12-01T00:00:00.000Z",
    });
    expect(await status()).toBe("certificate stale: model changed");
  });
});

/**
 * `decide audit` as a user runs it, on DynamoDB Local: audit samples of two confidence bands
 * (audited at 50% and 10%) labelled through the review use case, beside what must stay out of the
 * estimate (a labelled escalation, an audit sample older than --since), a sample still waiting
 * and one disputed. The estimate weights each band by the decisions it stands for, so it differs
 * from the plain share of wrong audit labels; the verdict against each policy's error budget has
 * three states (within, over, not enough labels) and the exit code follows it.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const TABLE = "audit-cli";
const bands = { edges: [0.9], rates: [0.5, 0.1] };
/**
 * The same samples under three budgets: far over 0.5% (the lower end of the interval, 1.0%, is
 * above it), well within 50% (the upper end, 41.6% with the 5 overdue unlabelled samples read as
 * wrong, is under it), and undecided at 10% (the interval spans it).
 */
const POLICIES = [
  { ...TEAMS_POLICY, id: "hot", auditSampleRate: 0, auditBands: bands, maxAutoError: 0.005 },
  { ...TEAMS_POLICY, id: "calm", auditSampleRate: 0, auditBands: bands, maxAutoError: 0.5 },
  { ...TEAMS_POLICY, id: "unsure", auditSampleRate: 0, auditBands: bands, maxAutoError: 0.1 },
];
/**
 * Per policy: band <0.9 (π 0.5) 20 labelled, 4 wrong; band >=0.9 (π 0.1) 20 labelled, 1 wrong,
 * and 5 unlabelled (one disputed). Weights 40 and 250: (40 × 4/20 + 250 × 1/20) / 290.
 */
const EXPECTED_RATE = (40 * 0.2 + 250 * 0.05) / 290;

let dynamo: LocalDynamoDb;
let dir: string;
let env: NodeJS.ProcessEnv;

/** A pending record of `policyId` decided at `createdAt`, routed to people for `reason`. */
function pending(policyId: string, itemId: string, createdAt: string, extra: Partial<DecisionRecord>) {
  return {
    itemId,
    policyId,
    policyVersion: 1,
    status: "pending_review" as const,
    route: "human" as const,
    reason: "audit_sample" as const,
    chosen: "billing",
    topProbability: 0.95,
    createdAt,
    updatedAt: createdAt,
    eventPublished: true,
    ...extra,
  };
}

/** Writes one policy's records and labels them through the review use case. */
async function seed(store: DynamoDbDecisionStore, policies: PolicyRegistry, policyId: string): Promise<void> {
  const at = "2026-11-20T10:00:00.000Z";
  const review = {
    store,
    policies,
    publisher: { publish: async () => undefined },
    timings: { claimMs: 60_000, changeWindowMs: 60_000 },
    now: () => new Date(),
  };
  const reviewer = { id: "ana", name: "Ana", groups: ["reviewers"] };
  const toLabel: [string, string][] = [];
  for (let i = 0; i < 20; i++) {
    const low = { auditBand: "<0.9", auditInclusionProbability: 0.5, topProbability: 0.85 };
    await store.create(pending(policyId, `${policyId}-L${i}`, at, low));
    toLabel.push([`${policyId}-L${i}`, i < 4 ? "technical" : "billing"]);
    const high = { auditBand: ">=0.9", auditInclusionProbability: 0.1 };
    await store.create(pending(policyId, `${policyId}-H${i}`, at, high));
    toLabel.push([`${policyId}-H${i}`, i < 1 ? "technical" : "billing"]);
  }
  for (let i = 0; i < 5; i++)
    await store.create(
      pending(policyId, `${policyId}-W${i}`, at, {
        auditBand: ">=0.9",
        auditInclusionProbability: 0.1,
        ...(i === 0 ? { disputed: true } : {}),
      }),
    );
  // Out of the estimate: an escalation below the threshold, and an audit sample before --since.
  await store.create(
    pending(policyId, `${policyId}-ESC`, at, { reason: "below_threshold", topProbability: 0.6 }),
  );
  toLabel.push([`${policyId}-ESC`, "technical"]);
  const old = { auditBand: "<0.9", auditInclusionProbability: 0.5 };
  await store.create(pending(policyId, `${policyId}-OLD`, "2026-10-01T10:00:00.000Z", old));
  toLabel.push([`${policyId}-OLD`, "technical"]);
  for (const [itemId, label] of toLabel)
    await labelItem({ itemId, policyId, policyVersion: 1, label }, reviewer, review);
}

beforeAll(async () => {
  dynamo = await startDynamoDbLocal({ port: await freePort() });
  dir = await mkdtemp(join(tmpdir(), "audit-cli-"));
  for (const policy of POLICIES) await writeFile(join(dir, `${policy.id}.v1.json`), JSON.stringify(policy));
  env = {
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
  };
  await ensureDecisionsTable(dynamo.endpoint, TABLE);
  const store = new DynamoDbDecisionStore(documentClient(localServiceOptions(dynamo.endpoint)), TABLE);
  const policies = await PolicyRegistry.fromFolder(dir);
  for (const policy of POLICIES) await seed(store, policies, policy.id);
}, 300_000);

afterAll(async () => {
  await dynamo?.stop();
});

const audit = (args: string[]) =>
  runDecide(["audit", "--from-table", TABLE, "--policies-dir", dir, "--since", "2026-11-01", ...args], env);

interface AuditJson {
  policyId: string;
  target: number;
  overall: { rate: number; interval: [number, number]; samples: number; labelled: number; wrong: number };
  strata: { band: string; samples: number; labelled: number; wrong: number }[];
  notes: string[];
}

describe("decide audit on the decisions table", () => {
  it("weights each band by the decisions it stands for, from audit labels since --since only", async () => {
    const run = await audit(["--policy", "calm", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const [calm] = JSON.parse(run.stdout) as AuditJson[];
    expect(calm!.policyId).toBe("calm");
    expect(calm!.overall.samples).toBe(45);
    expect(calm!.overall.labelled).toBe(40);
    expect(calm!.overall.wrong).toBe(5);
    expect(calm!.overall.rate).toBeCloseTo(EXPECTED_RATE, 10);
    // The plain share of wrong audit labels (12.5%) would over-weight the heavily audited band.
    expect(calm!.overall.rate).toBeLessThan(5 / 40);
    const [low, high] = calm!.overall.interval;
    expect(low).toBeLessThan(EXPECTED_RATE);
    expect(high).toBeGreaterThan(EXPECTED_RATE);
    expect(calm!.strata.map((s) => [s.band, s.samples, s.labelled, s.wrong])).toEqual([
      ["<0.9", 20, 20, 4],
      [">=0.9", 25, 20, 1],
    ]);
    expect(calm!.notes.join("\n")).toContain("1 audit sample is disputed between reviewers and waits");
  });

  it("prints the estimate, its bands and a verdict in three states, and exits 0, 3 or 4 by it", async () => {
    const calm = await audit(["--policy", "calm"]);
    expect(calm.code, calm.stderr).toBe(0);
    expect(calm.stdout).toMatch(
      /^calm: wrong automatic actions since 2026-11-01: 7\.1% \(95% interval \d+\.\d% to \d+\.\d%; 40 audit labels, 5 wrong\)/,
    );
    expect(calm.stdout).toMatch(
      /within budget: at most \d+\.\d% wrong \(upper end of the 95% interval, 5 overdue unlabelled samples read as wrong\) is within maxAutoError 50\.0%; audit labels speak for 100\.0% of automatic decisions/,
    );
    expect(calm.stdout).toContain("5 audit samples drawn and not labelled, 5 of them for over 48 hours");
    expect(calm.stdout).toContain("chosen billing: 7.1%");
    expect(calm.stdout).toContain("v1 band <0.9: audited at 50.0%, 20 drawn, 20 labelled, 4 wrong");
    expect(calm.stdout).toContain("v1 band >=0.9: audited at 10.0%, 25 drawn, 20 labelled, 1 wrong");
    const hot = await audit(["--policy", "hot"]);
    expect(hot.code).toBe(3);
    expect(hot.stdout).toMatch(
      /OVER BUDGET: at least \d+\.\d% wrong \(lower end of the 95% interval\) is above maxAutoError 0\.5%; a policy exactly at its budget is called over in at most 2\.5% of windows/,
    );
    const unsure = await audit(["--policy", "unsure"]);
    expect(unsure.code).toBe(4);
    expect(unsure.stdout).toMatch(
      /NOT ENOUGH AUDIT LABELS to judge maxAutoError 10\.0%: the rate lies between \d+\.\d% and \d+\.\d% .*; at the rates seen, about \d+ more audit labels would settle it \(\d+ in v1 band <0\.9, \d+ in v1 band >=0\.9\)/,
    );
    // Every policy at once: one over budget is enough for exit 3.
    const all = await audit([]);
    expect(all.code).toBe(3);
    expect(all.stdout).toMatch(/^calm: /m);
    expect(all.stdout).toMatch(/^hot: /m);
  });

  it("takes the older sample in when --since reaches back to it", async () => {
    const run = await audit(["--policy", "calm", "--json", "--since", "2026-09-01"]);
    expect(run.code, run.stderr).toBe(0);
    const [calm] = JSON.parse(run.stdout) as AuditJson[];
    expect(calm!.overall.labelled).toBe(41);
    expect(calm!.overall.wrong).toBe(6);
  });

  it.each([
    [["--since", "last week"], /--since must be a date \(YYYY-MM-DD\) or an ISO time, got "last week"/],
    [["--policy", "nope"], /--policy: unknown policy "nope" \(known: calm, hot, unsure\)/],
    [["--confidence", "1.5"], /--confidence must be above 0\.5 and below 1, got "1\.5"/],
  ])("refuses %j with a one-line usage error", async (args, message) => {
    const run = await audit(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

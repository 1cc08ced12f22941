/**
 * The lead's path end to end (issue 40, "How it is checked"), on DynamoDB Local: the shipped
 * `content-moderation` cascade (the first model, then `demo-large`, then people) decides live items
 * through the decide path (both models asked) and a batch as the batch lane decided before it
 * asked later models (the first model only). The models are a generated pair whose truth is known
 * (`test/helpers/lead-flow.ts`). Reviewers right 99% of the time label the queue through the review
 * use case the pages call: escalations once, audit and certification samples twice (a
 * disagreement goes to the lead, an admin). The lead follows docs/calibration.md's walkthrough:
 * `decide calibrate --plan`, `--plan --request N`, labels, `--rescore` (the use case, on the
 * generated endpoint), `--propose --max-auto-error 0.02`, repeating while the plan asks for more,
 * then `--apply-proposal`. Each `--request` writes a registered plan with its sample, and the
 * proposal is that plan's certificate, tested on the sample's drawn decisions alone (method
 * "pre-registered sample"), recomputed from the sample's records when it is applied. It ends with
 * an applied certified version that automates, within 400 certification labels, whose true rate of
 * wrong automatic actions over both models is under the target. The same with a model wrong 8% of the time among what it automates and a reviewer who
 * skips the drawn items it disagrees with ends with no certificate.
 */
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import { calibratedProbabilities } from "../../shared/domain/calibration/map.ts";
import { tierPolicy } from "../../shared/domain/cascade.ts";
import { DetailType, type PipelineEvent } from "../../shared/domain/events.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { argmax } from "../../shared/domain/probability.ts";
import { optionAutomated } from "../../shared/domain/routing.ts";
import { applyDecision } from "../../shared/use-cases/apply-decision.ts";
import { rescoreLaterTiers } from "../../shared/use-cases/calibration/rescore-later-tiers.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import type { DecisionMadeDetail } from "../../shared/use-cases/event-authority.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import {
  decideAudit,
  decideCalibrate,
  type GeneratedItem,
  generatedEndpoint,
  generatedItems,
  readSampleItems,
  scriptedReviewer,
} from "../helpers/lead-flow.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import type { FlowShape } from "../helpers/review-flow.ts";

/** The target: 2% at 95% (LEAD_TARGET=0.05 runs another). */
const MAX_ERROR = Number(process.env.LEAD_TARGET ?? "0.02");
const TARGET = ["--max-auto-error", String(MAX_ERROR), "--confidence", "0.95"];
const LIVE = 450;
const BATCH = 150;
/** Live items v2 decides before its first audit. */
const AFTER = 200;

let dynamo: LocalDynamoDb;
const folders: string[] = [];

beforeAll(async () => {
  dynamo = await startDynamoDbLocal({ port: await freePort() });
  Object.assign(process.env, {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
  });
}, 120_000);

afterAll(async () => {
  await dynamo?.stop();
  for (const f of folders) await rm(f, { recursive: true, force: true });
});

const prefixOf = (id: string) => (id.startsWith("LIVE") ? "live" : "batch");
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
/** A line of the run's progress (phases and their times), on stderr. */
const progress = (line: string) => process.stderr.write(`lead-certification: ${line}\n`);

/** `decide calibrate ARGS`, its command and output written out with LEAD_TRANSCRIPT=1 (the guide's walkthrough quotes them). */
async function calibrate(args: string[]) {
  const run = await decideCalibrate(args);
  if (process.env.LEAD_TRANSCRIPT === "1")
    progress([`$ npx decide calibrate ${args.join(" ")}`, ...run.printed.lines].join("\n"));
  return run;
}

/** A table, a copy of the shipped policies, and the pipeline's pieces on them. */
async function setting(table: string, shape: FlowShape, seed: number) {
  await ensureDecisionsTable(dynamo.endpoint, table);
  const dir = await mkdtemp(join(tmpdir(), "lead-certification-"));
  folders.push(dir);
  const policiesDir = join(dir, "policies");
  await cp(join(REPO_ROOT, "events", "policies"), policiesDir, { recursive: true });
  const store = new DynamoDbDecisionStore(documentClient(localServiceOptions(dynamo.endpoint)), table);
  const policies = await PolicyRegistry.fromFolder(policiesDir);
  const policy = policies.current("content-moderation")!;
  const states = await readSampleItems(200);
  const live = generatedItems(policy, { ...shape, decisions: LIVE }, seed, "LIVE");
  const batch = generatedItems(policy, { ...shape, decisions: BATCH }, seed + 1, "BATCH");
  const truth = new Map<string, GeneratedItem>([...live, ...batch]);
  let clock = Date.UTC(2026, 11, 1);
  const now = () => {
    clock += 1000;
    return new Date(clock);
  };
  // The auto-action target's part: each "Decision Made" that routes auto is applied (auto_approved → actioned).
  const made: PipelineEvent[] = [];
  const publisher = {
    publish: async (events: readonly PipelineEvent[]) => {
      made.push(...events.filter((e) => e.detailType === DetailType.made));
    },
  };
  const decide = async (
    items: ReadonlyMap<string, GeneratedItem>,
    servesLater: boolean,
    registry: PolicyRegistry = policies,
  ) => {
    const endpoint = generatedEndpoint(truth, servesLater);
    const deps = { policies: registry, store, endpoint, publisher, publishLeaseMs: 60_000, now };
    let i = 0;
    for (const id of items.keys()) {
      // Each item its own text (a tag of letters: numbers fold to 0 in the near-duplicate key).
      const tag = Array.from(String(i), (d) => "abcdefghij"[Number(d)]).join("");
      const state = {
        post: `${JSON.stringify(states[i++ % states.length]!.state)} ref ${prefixOf(id)}${tag}`,
      };
      await decideMessage(JSON.stringify({ id, policy: policy.id, state }), deps);
    }
  };
  // Live items through the decide path (both models); the batch as the batch lane decided it before it asked later models.
  const quiet = { publish: async () => undefined };
  /** Decides `items` under `registry`'s versions, then applies what they automated. */
  const decideAndApply = async (
    items: ReadonlyMap<string, GeneratedItem>,
    servesLater: boolean,
    registry: PolicyRegistry = policies,
  ) => {
    await decide(items, servesLater, registry);
    for (const e of made.splice(0))
      await applyDecision(e.detail as DecisionMadeDetail, {
        store,
        publisher: quiet,
        policies: registry,
        now,
      });
  };
  const t0 = performance.now();
  await decide(live, true);
  await decideAndApply(batch, false);
  progress(`${table}: ${LIVE + BATCH} decided and applied in ${seconds(t0)}`);
  const review = {
    store,
    policies,
    publisher,
    timings: { claimMs: 60_000, changeWindowMs: 60_000 },
    now,
  };
  const flags = ["--policy", policy.id, "--policies-dir", policiesDir, "--from-table", table];
  return { dir, policiesDir, store, policies, policy, truth, review, now, flags, decideAndApply };
}

type Setting = Awaited<ReturnType<typeof setting>>;

const R1 = { id: "r1", name: "R1", groups: ["reviewers"] };
const R2 = { id: "r2", name: "R2", groups: ["reviewers"] };
const LEAD = { id: "lead", name: "Lead", groups: ["reviewers", "admins"] };

/**
 * Labels the queue as reviewers would: each item once, or twice for audit and certification
 * samples (a disagreement then goes to the lead). `skip`: whether reviewers leave a drawn item
 * in the queue. Returns the certification samples labelled.
 */
async function labelQueue(s: Setting, seed: number, skip?: (label: string, chosen: string) => boolean) {
  const reviewers = [R1, R2, LEAD].map((_, k) => scriptedReviewer(s.policy, 0.99, seed * 31 + k));
  let certification = 0;
  for (let pass = 0; pass < 3; pass++) {
    const page = await s.store.pageReviewQueue({ policyIds: [s.policy.id], limit: 100_000, countCap: 0 });
    if (process.env.LEAD_TRANSCRIPT === "1")
      progress(
        `pass ${pass}: ${page.records.length} waiting, ${page.records.filter((r) => r.certification).length} drawn`,
      );
    for (const r of page.records) {
      const truth = s.truth.get(r.itemId)!.truth;
      const who = r.disputed ? 2 : r.firstReview ? 1 : 0;
      const label = reviewers[who]!(truth);
      if (r.certification && skip?.(label, r.chosen!)) continue;
      const outcome = await labelItem({ ...r, label }, [R1, R2, LEAD][who]!, s.review);
      if (r.certification && outcome.final) certification++;
    }
  }
  return certification;
}

/** The true rate of wrong automatic actions of `policy` (both tiers) over the generated items. */
function trueRate(policy: Policy, truth: ReadonlyMap<string, GeneratedItem>): number {
  let automated = 0;
  let wrong = 0;
  for (const g of truth.values()) {
    for (const [tier, logits] of [g.first, g.second].entries()) {
      const view = tierPolicy(policy, tier);
      const p = calibratedProbabilities(logits, view);
      const top = argmax(p);
      if (!optionAutomated(view, view.options[top]!.id) || p[top]! < view.autoThreshold) continue;
      automated++;
      wrong += tier === 0 ? g.wrongChance : Number(top !== view.options.findIndex((o) => o.id === g.truth));
      break;
    }
  }
  return automated ? wrong / automated : 0;
}

/** The lead's loop: plan, request, label, re-score, propose; the proposal's file once it carries a certificate. */
async function leadLoop(s: Setting, seed: number, skip?: (label: string, chosen: string) => boolean) {
  let certification = 0;
  const out = join(s.dir, "calibration-out");
  for (let round = 0; round < 4; round++) {
    const { result } = await calibrate(["--plan", ...s.flags, ...TARGET]);
    if (result.mode !== "plan") throw new Error("not a plan");
    const n = result.planned.plan.remaining;
    if (n === null) break;
    if (n > 0) await calibrate(["--plan", ...s.flags, ...TARGET, "--request", String(n)]);
    const t0 = performance.now();
    certification += await labelQueue(s, seed + round, skip);
    progress(
      `round ${round + 1}: plan ${n}, ${certification} certification labels so far, labelled in ${seconds(t0)}`,
    );
    const rescored = await rescoreLaterTiers(
      { store: s.store, endpoint: generatedEndpoint(s.truth), now: s.now },
      s.policy,
    );
    expect(rescored.failed).toEqual([]);
    const t1 = performance.now();
    const proposed = await calibrate(["--propose", ...s.flags, ...TARGET, "--out", out]);
    progress(
      `round ${round + 1}: re-scored ${rescored.rescored}, proposed in ${seconds(t1)}: ${proposed.printed.lines.slice(0, 3).join(" | ")}`,
    );
    if (proposed.result.mode !== "propose") throw new Error("not a proposal");
    const [outcome] = proposed.result.outcomes;
    if (outcome?.status !== "proposed") continue;
    const file = join(out, outcome.keys.policy);
    const written = JSON.parse(await readFile(file, "utf8")) as Policy;
    if (written.certificate?.threshold != null) return { file, written, certification, rounds: round + 1 };
  }
  return { certification };
}

describe("the lead's path to a certified cascade", () => {
  it("ends with an applied certified version that automates, within 400 certification labels", async () => {
    const started = performance.now();
    const s = await setting("lead-honest", { decisions: 0, trueTemperature: 0.7 }, 3);
    const ended = await leadLoop(s, 3);
    expect(ended.file, `no certificate after ${ended.certification} certification labels`).toBeDefined();
    expect(ended.certification).toBeLessThanOrEqual(400);
    // At another target than the registered plan's, propose refuses rather than certify the plan's.
    const other = [
      "--max-auto-error",
      String(MAX_ERROR * 2),
      "--confidence",
      "0.95",
      "--out",
      join(s.dir, "other"),
    ];
    await expect(calibrate(["--propose", ...s.flags, ...other])).rejects.toThrow(
      /\(sample cert-[^)]*\) was drawn for ≤ [\d.]+% wrong at 95% confidence, not ≤ [\d.]+% wrong.*propose at the plan's target/,
    );
    const applied = await calibrate([
      "--apply-proposal",
      ended.file!,
      "--policies-dir",
      s.policiesDir,
      "--from-table",
      "lead-honest",
    ]);
    expect(applied.printed.exitCode, applied.printed.lines.join("\n")).toBe(0);
    const v2 = (await PolicyRegistry.fromFolder(s.policiesDir)).current("content-moderation")!;
    expect(v2.version).toBe(2);
    // Certified by the registered plan: its own sample alone, recomputed from its records at apply.
    expect(v2.certificate?.method).toBe("pre-registered sample");
    expect(v2.certificate?.labelSource?.kind).toBe("sample");
    expect(v2.certificate?.kinds?.audit ?? 0).toBe(0);
    expect(applied.printed.lines.join("\n")).toMatch(
      /certificate verified \(pre-registered sample cert-[^)]*\): recomputed on its \d+ labels/,
    );
    expect(v2.certificate?.tiers?.map((t) => t.model ?? "first")).toEqual(["first", "demo-large"]);
    expect(v2.autoThreshold).toBeLessThan(1);
    const rate = trueRate(v2, s.truth);
    expect(rate).toBeLessThanOrEqual(MAX_ERROR);
    // 7. First audit: v2 decides new live items, reviewers label what it drew, the lead reads the audit.
    const next = generatedItems(v2, { decisions: AFTER, trueTemperature: 0.7 }, 11, "LIVE-V2-");
    for (const [id, item] of next) s.truth.set(id, item);
    const withV2 = await PolicyRegistry.fromFolder(s.policiesDir);
    await s.decideAndApply(next, true, withV2);
    await labelQueue({ ...s, review: { ...s.review, policies: withV2 } }, 11);
    const audit = await decideAudit([
      "--from-table",
      "lead-honest",
      "--policy",
      "content-moderation",
      "--policies-dir",
      s.policiesDir,
      "--since",
      "2026-12-01",
    ]);
    if (process.env.LEAD_TRANSCRIPT === "1")
      progress(
        [
          `$ npx decide audit --from-table "$DECISIONS_TABLE" --policy content-moderation --since 2026-12-01`,
          ...audit.printed.lines,
        ].join("\n"),
      );
    const [read] = audit.result;
    // v2's own audit samples are in the estimate, every one labelled (none overdue, none waiting).
    const v2Samples = read?.strata.filter((b) => b.policyVersion === 2) ?? [];
    expect(v2Samples.reduce((n, b) => n + b.labelled, 0)).toBeGreaterThan(0);
    expect(v2Samples.every((b) => b.labelled === b.samples)).toBe(true);
    // The policy sets no maxAutoError: the audit judges the version against its certificate's own claim.
    expect(read).toMatchObject({ target: MAX_ERROR, targetSource: "certificate" });
    expect(read?.verdict?.state).toMatch(/^(within_budget|not_enough_labels)$/);
    expect(audit.printed.lines.join("\n")).toMatch(/(within|to judge) its certificate's 2\.0%/);
    console.info(
      `lead: certificate after ${ended.rounds} round(s), ${ended.certification} certification labels; v2 at ${v2.autoThreshold} / ${v2.cascade?.[0]?.autoThreshold}, true rate ${(rate * 100).toFixed(2)}%; ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }, 300_000);

  it("gets no certificate for a model wrong 8% of the time when reviewers skip the draws they disagree with", async () => {
    const shape = { decisions: 0, trueTemperature: 0.7, confidentlyWrong: { above: 0.85, rate: 0.08 } };
    const s = await setting("lead-skipping", shape, 5);
    const ended = await leadLoop(s, 5, (label, chosen) => label !== chosen);
    expect(ended.file, "a certificate bought by skipping").toBeUndefined();
  }, 300_000);
});

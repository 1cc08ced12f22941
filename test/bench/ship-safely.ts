/**
 * The "Ship a policy change safely" walk-through of docs/calibration.md, end to end on DynamoDB
 * Local, so that the output it quotes comes from a run anyone can repeat: generated reviewed
 * decisions (1,200 content-moderation ones, right 99.5% of the time when the model is sure and
 * 70% when not, and 20 ticket-routing ones), then the commands a person runs: a proposal
 * without a certificate, one certified with --max-auto-error, --apply-proposal, and
 * `decide status` before and after another model decides. Prints each command and its output.
 *   npm run example:ship-safely
 */
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const TABLE = "ship-safely";
const MODEL = "a".repeat(64);
const OTHER_MODEL = "f".repeat(64);
const LAYOUT = "choice-v1@policy-first";
const OPTIONS: Record<string, readonly string[]> = {
  "content-moderation": ["allow", "restrict", "remove", "out_of_scope"],
  "ticket-routing": ["billing", "technical", "account", "out_of_scope"],
};

/** A decided record of `policyId` (reviewed with `label` when given), scored by `model`. */
function record(
  policyId: string,
  i: number,
  logits: number[],
  options: { label?: string; version?: number; model?: string; at?: Date } = {},
): DecisionRecord {
  const at = (options.at ?? new Date(Date.UTC(2026, 10, 30, 10, 0, 0, i * 10))).toISOString();
  const label = options.label;
  return {
    itemId: `${policyId}-${i}`,
    policyId,
    policyVersion: options.version ?? 1,
    status: label ? "reviewed" : "auto_approved",
    route: label ? "human" : "auto",
    reason: label ? "below_threshold" : "confident",
    chosen: OPTIONS[policyId]![logits.indexOf(Math.max(...logits))]!,
    rawLogits: logits,
    modelSha256: options.model ?? MODEL,
    promptVersion: LAYOUT,
    ...(label ? { label, reviewedAt: at } : {}),
    createdAt: at,
    updatedAt: at,
    eventPublished: true,
  };
}

/**
 * `count` reviewed decisions: half the model is sure of (logit gap 6, right with `sure`), half not
 * (gap 1, right with `unsure`); the truth cycles through the first three options.
 */
function labelled(policyId: string, count: number, seed: number, sure: number, unsure: number) {
  const random = new SeededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const confident = i % 2 === 0;
    const truth = i % 3;
    const right = random.nextFloat() < (confident ? sure : unsure);
    const chosen = right ? truth : (truth + 1 + (random.nextFloat() < 0.5 ? 0 : 1)) % 3;
    const logits = [0, 0, 0, -4].map((l, k) => (k === chosen ? (confident ? 6 : 1) : l));
    return record(policyId, i, logits, { label: OPTIONS[policyId]![truth]! });
  });
}

const dir = await mkdtemp(join(tmpdir(), "ship-safely-"));

/**
 * Prints a command as docs/calibration.md shows it, runs it, and prints its output with the scratch
 * folders named as in docs/calibration.md (`calibration-out`, `events/policies`).
 */
async function step(title: string, args: string[], env: NodeJS.ProcessEnv, shown: string): Promise<void> {
  console.log(`\n## ${title}\n$ npx decide ${shown}`);
  const run = await runDecide(args, env);
  const out = `${run.stdout}${run.stderr}`
    .trimEnd()
    .replaceAll(join(dir, "plain"), "calibration-out")
    .replaceAll(join(dir, "certified"), "calibration-out")
    .replaceAll(join(dir, "policies"), "events/policies");
  console.log(out.replace(/^/gm, "  "));
  if (run.code !== 0) throw new Error(`decide ${args[0]} exited ${run.code}`);
}

const dynamo = await startDynamoDbLocal({ port: await freePort() });
try {
  await ensureDecisionsTable(dynamo.endpoint, TABLE);
  const store = new DynamoDbDecisionStore(documentClient(localServiceOptions(dynamo.endpoint)), TABLE);
  const policies = join(dir, "policies");
  await cp(join(REPO_ROOT, "events", "policies"), policies, { recursive: true });
  const rows = [
    ...labelled("content-moderation", 1200, 11, 0.995, 0.7),
    ...labelled("ticket-routing", 20, 12, 0.99, 0.7),
  ];
  for (const row of rows) await store.create(row);
  console.log(
    `seeded ${rows.length} reviewed decisions in ${TABLE} (model ${MODEL.slice(0, 8)}…, ${LAYOUT})`,
  );
  const env = {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
  };
  const common = ["--policies-dir", policies];
  const propose = ["calibrate", "--from-table", TABLE, "--propose", "--min-labels", "10", ...common];
  await step(
    "proposal from reviewers' labels (no certificate)",
    [...propose, "--out", join(dir, "plain")],
    env,
    'calibrate --from-table "$DECISIONS_TABLE" --propose --min-labels 10 --out calibration-out',
  );
  const certify = ["--max-auto-error", "0.02", "--confidence", "0.95"];
  await step(
    "certified proposal",
    [...propose, ...certify, "--out", join(dir, "certified")],
    env,
    `calibrate --from-table "$DECISIONS_TABLE" --propose --min-labels 10 ${certify.join(" ")} --out calibration-out`,
  );
  const proposal = "content-moderation/v2-from-1200-labels-max-error-0.02-at-0.95/policy.json";
  await step(
    "apply",
    ["calibrate", "--apply-proposal", join(dir, "certified", proposal), ...common],
    env,
    `calibrate --apply-proposal calibration-out/${proposal}`,
  );
  const status = ["status", "--table", TABLE, ...common];
  const later = (minutes: number) => new Date(Date.UTC(2026, 11, 1, 9, minutes));
  await store.create(record("content-moderation", 5000, [6, 0, 0, -4], { version: 2, at: later(0) }));
  await step("status, the certified model deciding", status, env, "status");
  await store.create(
    record("content-moderation", 5001, [6, 0, 0, -4], { version: 2, model: OTHER_MODEL, at: later(1) }),
  );
  await step("status, once another model file decides", status, env, "status");
} finally {
  await dynamo.stop();
  await rm(dir, { recursive: true, force: true });
}

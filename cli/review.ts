/**
 * `decide review`: the lead's side of the review queue. `gold --file gold.jsonl` makes decided
 * items with known answers gold items (mixed into the queue unmarked, each reviewer's answer
 * measured); `accuracy --policy P` prints each reviewer's accuracy on them, with what a target
 * needs of reviewers (`shared/domain/calibration/certificate/reviewer-plan.ts`).
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { reviewerPlanLines } from "../shared/domain/calibration/certificate/reviewer-plan.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import {
  GOLD_DEFAULT_REVIEWS,
  GOLD_MAX_REVIEWS,
  parseGoldFile,
  type ReviewerAccuracy,
} from "../shared/domain/review/review-gold.ts";
import { type GoldLoad, loadGold, reviewerAccuracyOf } from "../shared/use-cases/review/gold-items.ts";
import { CommandError, integerFlag, requiredFlag, settingFrom, UsageError } from "./args.ts";
import { AWS_FLAGS, awsOptions, decisionStore } from "./aws.ts";
import type { CommandEnv, OneShotCommand } from "./command.ts";
import { cannotRead } from "./input-file.ts";

export const reviewUsage = `decide review gold --file gold.jsonl [--reviews ${GOLD_DEFAULT_REVIEWS}] [--by NAME] [--from-table T]
decide review accuracy --policy ID [--max-auto-error 0.02] [--from-table T]
             [--policies-dir events/policies] [--region R] [--profile P]

gold: each line of the file ({"itemId": "...", "policy": "...", "answer": "<option id>"}, optional
"version") names a decided item whose right answer you know. It joins the review queue like any other
item, unmarked for reviewers (admins see it as gold); --reviews different reviewers (1 to ${GOLD_MAX_REVIEWS}) answer it,
then it settles with the known answer. All or nothing: any problem is printed with its line, nothing loaded.
Gold labels never count as the model's evidence. Items must have been decided (send them first).
accuracy: each reviewer's right answers on gold items, with a 95% interval, and what --max-auto-error
(default the policy's maxAutoError, else 2%) needs of reviewers with one review and with two.
Example: npx decide review gold --file gold.jsonl --from-table "$DECISIONS_TABLE"`;

/** What `decide review` was asked. */
type ReviewOptions = {
  readonly table: string;
  readonly policiesDir: string;
  readonly aws: { readonly region?: string | undefined; readonly profile?: string | undefined };
} & (
  | { readonly action: "gold"; readonly file: string; readonly reviews: number; readonly by: string }
  | { readonly action: "accuracy"; readonly policyId: string; readonly maxError: number | undefined }
);

type ReviewResult =
  | { readonly action: "gold"; readonly load: GoldLoad }
  | {
      readonly action: "accuracy";
      readonly reviewers: ReviewerAccuracy[];
      readonly maxError: number;
    };

function parse(argv: string[], env: CommandEnv): ReviewOptions {
  const [action, ...rest] = argv;
  if (action !== "gold" && action !== "accuracy")
    throw new UsageError(`decide review: "${action ?? ""}" is not gold or accuracy`);
  const { values } = parseArgs({
    args: rest,
    options: {
      ...AWS_FLAGS,
      file: { type: "string" },
      reviews: { type: "string" },
      by: { type: "string" },
      policy: { type: "string" },
      "max-auto-error": { type: "string" },
      "from-table": { type: "string" },
      "policies-dir": { type: "string", default: "events/policies" },
    },
    strict: true,
  });
  const base = {
    table: settingFrom("from-table", values["from-table"], FUNCTION_ENV.DECISIONS_TABLE, env),
    policiesDir: values["policies-dir"]!,
    aws: { region: values.region, profile: values.profile },
  };
  if (action === "gold")
    return {
      ...base,
      action,
      file: requiredFlag("file", values.file),
      reviews: integerFlag("reviews", values.reviews, GOLD_DEFAULT_REVIEWS, 1, GOLD_MAX_REVIEWS),
      by: values.by ?? env.USER ?? "the lead",
    };
  const raw = values["max-auto-error"];
  const maxError = raw === undefined ? undefined : Number(raw);
  if (maxError !== undefined && !(maxError > 0 && maxError < 1))
    throw new UsageError(`--max-auto-error must be above 0 and below 1, got "${raw}"`);
  return { ...base, action, policyId: requiredFlag("policy", values.policy), maxError };
}

async function run(options: ReviewOptions): Promise<ReviewResult> {
  const policies = await PolicyRegistry.fromFolder(options.policiesDir);
  const store = decisionStore(options.table, awsOptions(options.aws));
  if (options.action === "accuracy") {
    const policy = policies.current(options.policyId);
    if (!policy)
      throw new UsageError(
        `--policy: unknown policy "${options.policyId}" (known: ${policies.ids().join(", ")})`,
      );
    const maxError = options.maxError ?? policy.maxAutoError ?? 0.02;
    return { action: "accuracy", reviewers: await reviewerAccuracyOf(store, policy.id), maxError };
  }
  let text: string;
  try {
    text = await readFile(options.file, "utf8");
  } catch (error) {
    throw cannotRead(options.file, error);
  }
  const parsed = parseGoldFile(text);
  if (parsed.problems.length)
    return { action: "gold", load: { queued: 0, marked: 0, unchanged: 0, problems: parsed.problems } };
  if (!parsed.lines.length) throw new UsageError(`--file: ${options.file} names no item`);
  // The lines' numbers in the file, for the problems the store finds.
  const numbered = text
    .split(/\r?\n/)
    .flatMap((l, i) => (l.trim() ? [i + 1] : []))
    .map((line, i) => ({ ...parsed.lines[i]!, line }));
  const load = await loadGold({ store, policies, now: () => new Date() }, numbered, {
    loadedBy: options.by,
    reviews: options.reviews,
  });
  return { action: "gold", load };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function print(result: ReviewResult, options: ReviewOptions) {
  if (result.action === "accuracy") {
    const lines = result.reviewers.length
      ? result.reviewers.map(
          (r) =>
            `${r.reviewerName}: ${r.right} of ${r.answered} gold items right (${pct(r.accuracy)}, 95% interval ${pct(r.interval[0])} to ${pct(r.interval[1])})`,
        )
      : ["no gold item answered yet: load some with decide review gold --file gold.jsonl"];
    const answered = result.reviewers.reduce((n, r) => n + r.answered, 0);
    const right = result.reviewers.reduce((n, r) => n + r.right, 0);
    return {
      lines: [...lines, ...reviewerPlanLines(result.maxError, answered ? right / answered : undefined)],
      exitCode: 0,
    };
  }
  const { load } = result;
  if (load.problems.length) {
    const file = options.action === "gold" ? options.file : "";
    const problems = load.problems.map((p) => (p.line ? `${file}:${p.line}: ${p.reason}` : p.reason));
    return {
      lines: [],
      exitCode: 1,
      error: new CommandError(`no gold item loaded:\n${problems.join("\n")}`),
    };
  }
  return {
    lines: [
      `gold items: ${load.queued} put into the review queue, ${load.marked} marked where they waited, ${load.unchanged} gold already; reviewers are not told which`,
    ],
    exitCode: 0,
  };
}

/** `decide review gold | accuracy`. */
export const reviewCommand: OneShotCommand<ReviewOptions, ReviewResult> = { parse, run, print };

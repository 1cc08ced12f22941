/**
 * What the lead's certification tests share: the sample moderation batch's items, a generated
 * pair of models for the shipped `content-moderation` cascade (the first model, and `demo-large`
 * surer on the same items) whose truth is known, scripted reviewers right a given share of the
 * time, and `decide calibrate` run in this process as a lead types it.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { auditCommand } from "../../cli/audit.ts";
import { calibrateCommand } from "../../cli/calibrate/calibrate.ts";
import type { OneShotCommand } from "../../cli/command.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import type { Item } from "../../shared/domain/item.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { REPO_ROOT } from "./models.ts";
import { decisionOf, type FlowShape } from "./review-flow.ts";

/** The first `count` items of the sample moderation batch. */
export async function readSampleItems(count: number): Promise<Item[]> {
  const text = await readFile(join(REPO_ROOT, "events/items/moderation-batch.jsonl"), "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .slice(0, count)
    .map((line) => JSON.parse(line) as Item);
}

/** One generated item: each model's logits, its true label, and the chance the first model's choice is wrong. */
export interface GeneratedItem {
  readonly first: number[];
  readonly second: number[];
  readonly truth: string;
  readonly wrongChance: number;
}

/** The model file hashes of the generated pair. */
const FIRST_SHA = "1".repeat(64);
const SECOND_SHA = "2".repeat(64);

/**
 * `count` generated items of `policy` (options in its order: allow, restrict, remove,
 * out_of_scope): the first model shaped as `review-flow.ts` shapes it, the truth drawn from its
 * true probabilities; the second model another, better one on the same items.
 */
export function generatedItems(policy: Policy, shape: FlowShape, seed: number, prefix: string) {
  const random = new SeededRandom(seed * 104_729 + 3);
  const items = new Map<string, GeneratedItem>();
  for (let i = 0; i < shape.decisions; i++) {
    const d = decisionOf(random, shape);
    const wrong = random.nextFloat() < d.wrongChance;
    const truth =
      policy.options[wrong ? (d.chosen + 1 + Math.floor(random.nextFloat() * 3)) % 4 : d.chosen]!.id;
    // The second model: right 95% of the time, and sure only where it is right (a gap of 5 to 9
    // logits on the truth; 1 to 3 on another option when wrong).
    const right = random.nextFloat() < 0.95;
    const t = policy.options.findIndex((o) => o.id === truth);
    const top = right ? t : (t + 1 + Math.floor(random.nextFloat() * 3)) % 4;
    const second = [0, 0, 0, 0].map(() => random.nextFloat());
    second[top]! += right ? 5 + 4 * random.nextFloat() : 1 + 2 * random.nextFloat();
    items.set(`${prefix}-${i}`, {
      first: d.logits,
      second,
      truth,
      wrongChance: d.wrongChance,
    });
  }
  return items;
}

/** The generated pair as an endpoint: `demo-large` answers where the policy's tier names it. */
export function generatedEndpoint(
  items: ReadonlyMap<string, GeneratedItem>,
  servesLater = true,
): DecidesItems {
  return {
    decide: async (item, view) => {
      const g = items.get(item.id);
      if (!g) throw new RangeError(`no generated answer for ${item.id}`);
      const second = view.model === "demo-large";
      const answer: EndpointDecision = {
        logits: second ? g.second : g.first,
        allowedTokenMass: 0.99,
        modelSha256: second ? SECOND_SHA : FIRST_SHA,
        promptSha256: "3".repeat(64),
        promptVersion: "choice-v1@policy-first",
        latencyMs: 1,
      };
      return answer;
    },
    serves: () => servesLater,
  };
}

/** A reviewer right `accuracy` of the time; a mistake is another option, drawn evenly. */
export function scriptedReviewer(policy: Policy, accuracy: number, seed: number) {
  const random = new SeededRandom(seed);
  return (truth: string): string => {
    if (random.nextFloat() < accuracy) return truth;
    const others = policy.options.map((o) => o.id).filter((id) => id !== truth);
    return others[Math.floor(random.nextFloat() * others.length)]!;
  };
}

/** A one-shot `decide` command run in this process: its result and printed lines (the environment is this process's). */
async function runInProcess<O, R>(command: OneShotCommand<O, R>, args: string[]) {
  const env = process.env as Record<string, string | undefined>;
  const options = command.parse(args, env);
  const io = { say: () => undefined, note: () => undefined, progress: process.stderr };
  const result = await command.run(options, io);
  return { result, printed: command.print(result, options) };
}

/** `decide calibrate ARGS` in this process. */
export const decideCalibrate = (args: string[]) => runInProcess(calibrateCommand, args);

/** `decide audit ARGS` in this process. */
export const decideAudit = (args: string[]) => runInProcess(auditCommand, args);

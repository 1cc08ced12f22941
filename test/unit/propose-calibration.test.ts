/**
 * Recalibration that closes the loop, on the in-memory store and a real folder: enough reviewer
 * labels since the version was calibrated give one proposal (policy, report, summary) and one
 * "Calibration Proposed"; too few give none; a rerun with no new label announces nothing; and the
 * explicit apply step writes the next version only when it is one.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { printProposals } from "../../cli/calibrate/calibrate-propose.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { calibrationProposedSchema } from "../../shared/domain/contracts/events.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { DetailType, type PipelineEvent } from "../../shared/domain/events.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { proposeCalibrations } from "../../shared/use-cases/calibration/propose-calibration.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

let store: InMemoryDecisionStore;
let objects: FsObjectStore;
let folder: string;
let events: PipelineEvent[];
const publisher = { publish: async (e: readonly PipelineEvent[]) => void events.push(...e) };

beforeEach(async () => {
  store = new InMemoryDecisionStore();
  folder = await mkdtemp(join(tmpdir(), "proposals-"));
  objects = new FsObjectStore(folder);
  events = [];
});

/** `count` reviewed decisions of `policy` whose logits are overconfident (right 70% of the time). */
async function review(policy: Policy, count: number, reviewedAt: string, offset = 0): Promise<void> {
  const random = new SeededRandom(11 + offset);
  for (let i = 0; i < count; i++) {
    const truth = random.nextFloat() < 0.5 ? 0 : 1;
    const chosen = random.nextFloat() < 0.7 ? truth : 1 - truth;
    const logits = [0, 0];
    logits[chosen] = 4 + random.nextFloat() * 4;
    const record: DecisionRecord = {
      itemId: `R-${offset + i}`,
      policyId: policy.id,
      policyVersion: policy.version,
      status: "reviewed",
      route: "human",
      reason: "below_threshold",
      chosen: policy.options[chosen]!.id,
      rawLogits: logits,
      allowedTokenMass: 0.9,
      label: policy.options[truth]!.id,
      reviewedAt,
      createdAt: reviewedAt,
      updatedAt: reviewedAt,
      eventPublished: true,
    };
    await store.create(record);
  }
}

const deps = (policies = new PolicyRegistry([TEAMS_POLICY])) => ({
  policies,
  store,
  objects,
  publisher,
  now: () => new Date("2026-12-01T06:00:00.000Z"),
});

describe("proposeCalibrations", () => {
  it("proposes nothing below the label floor, and says how many it has and needs", async () => {
    await review(TEAMS_POLICY, 30, "2026-11-30T10:00:00.000Z");
    const [outcome] = await proposeCalibrations(deps(), { minLabels: 50 });
    expect(outcome).toMatchObject({ status: "not_enough_labels", labels: 30, needed: 50 });
    expect(events).toHaveLength(0);
    expect(await objects.list("")).toHaveLength(0);
  });

  it("writes the proposed version, its report and summary, and announces it once", async () => {
    // 180 labels: enough for the refit's out-of-fold gain to pass the paired per-label test.
    await review(TEAMS_POLICY, 180, "2026-11-30T10:00:00.000Z");
    const [outcome] = await proposeCalibrations(deps(), { minLabels: 50 });
    expect(outcome).toMatchObject({ status: "proposed", labels: 180, proposedVersion: 2 });
    const keys = outcome!.status === "proposed" ? outcome!.keys : undefined;
    expect(keys?.policy).toBe("tickets/v2-from-180-labels/policy.json");
    const proposed = parsePolicy(JSON.parse(await readFile(join(folder, keys!.policy), "utf8")));
    expect(proposed.version).toBe(2);
    expect(proposed.calibratedAt).toBe("2026-12-01T06:00:00.000Z");
    // The logits are overconfident (right 70% of the time at p > 0.98): the fit cools them.
    expect(proposed.temperature).toBeGreaterThan(1.5);
    expect(await readFile(join(folder, keys!.report), "utf8")).toMatch(/<html/i);
    expect(events).toHaveLength(1);
    expect(events[0]!.detailType).toBe(DetailType.calibrationProposed);
    expect(calibrationProposedSchema.safeParse(events[0]!.detail).error).toBeUndefined();
    expect(events[0]!.detail).toMatchObject({ policyId: "tickets", proposedVersion: 2, labels: 180 });
    expect((events[0]!.detail.notes as string[]).join(" ")).toMatch(/fewer than 200/);

    // Nothing new: the same proposal is found, nothing is announced again.
    const [again] = await proposeCalibrations(deps(), { minLabels: 50 });
    expect(again!.status).toBe("already_proposed");
    expect(events).toHaveLength(1);
  });

  it("proposes again for another certified target, in a folder named by it (before: 'already proposed')", async () => {
    await review(TEAMS_POLICY, 180, "2026-11-30T10:00:00.000Z");
    const goal = (maxError: number) => ({ kind: "max-auto-error" as const, maxError, confidence: 0.95 });
    const [first] = await proposeCalibrations(deps(), { minLabels: 50, goal: goal(0.05) });
    const [second] = await proposeCalibrations(deps(), { minLabels: 50, goal: goal(0.1) });
    expect(first).toMatchObject({ status: "proposed" });
    expect(second).toMatchObject({ status: "proposed" });
    const keyOf = (o: typeof first) => (o?.status === "proposed" ? o.keys.policy : "");
    expect(keyOf(first)).toBe("tickets/v2-from-180-labels-max-error-0.05-at-0.95/policy.json");
    expect(keyOf(second)).toBe("tickets/v2-from-180-labels-max-error-0.1-at-0.95/policy.json");
    const [again] = await proposeCalibrations(deps(), { minLabels: 50, goal: goal(0.1) });
    expect(again).toMatchObject({ status: "already_proposed" });
  });

  it("counts a never-calibrated version's labels without saying 'since it was calibrated'", async () => {
    await review(TEAMS_POLICY, 2, "2026-11-30T10:00:00.000Z");
    const outcomes = await proposeCalibrations(deps(), { minLabels: 10 });
    const options = { out: "out", eventBus: undefined } as Parameters<typeof printProposals>[1];
    expect(printProposals(outcomes, options).lines).toEqual([
      "tickets@1: 2 labels of this version, 10 needed: no proposal",
    ]);
  });

  it("fits only labels given since the version was calibrated", async () => {
    const calibrated = { ...TEAMS_POLICY, calibratedAt: "2026-11-30T12:00:00.000Z" };
    await review(calibrated, 40, "2026-11-30T11:00:00.000Z");
    await review(calibrated, 20, "2026-11-30T13:00:00.000Z", 100);
    const [outcome] = await proposeCalibrations(deps(new PolicyRegistry([calibrated])), { minLabels: 30 });
    expect(outcome).toMatchObject({ status: "not_enough_labels", labels: 20 });
  });
});

describe("decide calibrate --propose", () => {
  it("answers an unknown --policy in one line, exit 2 (before: a RangeError stack)", async () => {
    const run = await runDecide([
      "calibrate",
      "--from-table",
      "no-such-table",
      "--propose",
      "--policy",
      "nosuch",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr.split("\n")[0]).toMatch(
      /^decide calibrate: --policy: unknown policy "nosuch" \(known: /,
    );
    expect(run.stderr).not.toMatch(/RangeError|\n\s+at /);
  });
});

describe("decide calibrate --apply-proposal", () => {
  it("writes the proposal as the next version, and refuses one that is not", async () => {
    await review(TEAMS_POLICY, 180, "2026-11-30T10:00:00.000Z");
    const [outcome] = await proposeCalibrations(deps(), { minLabels: 50 });
    const proposal = join(folder, outcome!.status === "proposed" ? outcome!.keys.policy : "");
    const policies = await mkdtemp(join(tmpdir(), "policies-"));
    await writeFile(join(policies, "tickets.v1.json"), JSON.stringify(TEAMS_POLICY));
    // 180 labels reach no threshold at 97% accuracy: the proposal keeps every ticket with people,
    // which apply takes only when told so.
    const applied = await runDecide([
      "calibrate",
      "--apply-proposal",
      proposal,
      "--policies-dir",
      policies,
      "--accept-no-automation",
    ]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/wrote .*tickets\.v2\.json/);
    expect(parsePolicy(JSON.parse(await readFile(join(policies, "tickets.v2.json"), "utf8"))).version).toBe(
      2,
    );
    const twice = await runDecide(["calibrate", "--apply-proposal", proposal, "--policies-dir", policies]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/version 2 of tickets, but .* is at version 2: only version 3 applies/);
  });
});

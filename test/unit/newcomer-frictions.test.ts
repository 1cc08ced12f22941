/**
 * A newcomer's small frictions (issue 43, item 7), each pinned where it is behaviour: counts said
 * in words ("1 label", not "1 labels"), the bus named as a bus where it shares a name with the
 * table, a missing folder named in one line instead of a stack trace, the results file's status
 * as the table says it, the model named wherever a decision is shown, progress on the commands
 * that were silent for seconds, and a live summary whose parts add up.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { adviceFor } from "../../cli/advice.ts";
import { type Planned, printPlan } from "../../cli/calibrate/calibrate-plan.ts";
import { onTerminal, slowStep } from "../../cli/terminal/slow-step.ts";
import { openApiDocument } from "../../endpoint/openapi/openapi.ts";
import { LiveSummary, summaryText } from "../../infra/local/local-summary.ts";
import { bundlingProgress } from "../../infra/scripts/synth-progress.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { estimateAutoError } from "../../shared/domain/audit/estimate.ts";
import { planLabels } from "../../shared/domain/calibration/certificate/label-plan.ts";
import { DEFAULT_MODEL } from "../../shared/domain/deciding-model.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { decisionsBody } from "../../shared/pages/decisions-view.ts";
import { tierAnswers } from "../../shared/pages/tier-answers.ts";
import { estimateText } from "../../shared/reports/audit-text.ts";
import { writeBatchFiles } from "../../shared/use-cases/batch-files.ts";
import { batchKeys } from "../../shared/use-cases/batch-progress.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const POLICY = parsePolicy({ ...TEAMS_POLICY, auditSampleRate: 0.02 });

describe("wording", () => {
  const plan = planLabels(POLICY, [], { maxError: 0.02, confidence: 0.95 });
  const planned = (requested?: Planned["requested"]): Planned => ({
    policy: POLICY,
    plan: { ...plan, held: { ...plan.held, labels: 1 } },
    where: "the table decisions",
    ...(requested ? { requested } : {}),
    options: {
      policyId: POLICY.id,
      policiesDir: "events/policies",
      goal: { maxError: 0.02, confidence: 0.95 },
      table: "decisions",
      input: undefined,
      request: 1,
      order: "first",
      aws: {},
    },
  });

  // Counts the sample's print reads (spread, so that a field added to the result's type elsewhere is carried).
  const drawn = { population: 5, marked: 0, skipped: 0, chosenBefore: 0 };

  it("counts one label and one band in the singular, and gives one chance once", () => {
    const frame = {
      sample: "s1",
      drawnAt: "2026-01-01T00:00:00Z",
      minProbability: 0.9,
      edges: [],
      rates: [0.416],
    };
    const lines = printPlan(planned({ frame, ...drawn, queued: 1 })).lines.join("\n");
    expect(lines).toMatch(/held in the table decisions: 1 label;/);
    expect(lines).toMatch(/\(1 band, chance 41\.6%\)/);
    const two = { ...frame, edges: [0.95], rates: [0.2, 0.416] };
    const more = printPlan(planned({ frame: two, ...drawn, queued: 2 })).lines;
    expect(more.join("\n")).toMatch(/\(2 bands, chance 20\.0% to 41\.6% each\)/);
  });
});

describe("a missing folder", () => {
  it("is one line naming the folder, not an ENOENT stack trace", async () => {
    const error = await PolicyRegistry.fromFolder("no-such-policies").catch((e: unknown) => e);
    expect(adviceFor(error)).toBe("no such folder: no-such-policies (check the flag or path that names it)");
  });

  it("says so from the command line, with exit code 1", async () => {
    const run = await runDecide([
      "publish",
      "events/items/samples.jsonl",
      "--dry-run",
      "--policies-dir",
      "nope",
    ]);
    expect(run.stderr.trim()).toBe(
      "decide publish: no such folder: nope (check the flag or path that names it)",
    );
    expect(run.code).toBe(1);
  }, 60_000);
});

describe("the live summary", () => {
  const emptyQueue = { depth: async () => ({ visible: 0, inFlight: 0 }) } as unknown as MessageQueue;
  const at = new Date("2026-12-01T10:00:00.000Z");
  const record = (i: number, route: "auto" | "human", status: DecisionRecord["status"]): DecisionRecord => ({
    itemId: `item-${i}`,
    policyId: "tickets",
    policyVersion: 1,
    status,
    route,
    reason: "confident",
    chosen: "billing",
    createdAt: at.toISOString(),
    updatedAt: at.toISOString(),
    eventPublished: true,
    ...(status === "reviewed" ? { label: "billing", reviewedAt: at.toISOString() } : {}),
  });

  it("adds up: decided is auto plus to people, and the labels (audit samples' included) are counted apart", async () => {
    const store = new InMemoryDecisionStore();
    for (let i = 0; i < 6; i++) await store.create(record(i, "auto", i < 4 ? "actioned" : "reviewed"));
    for (let i = 6; i < 10; i++)
      await store.create(record(i, "human", i < 7 ? "reviewed" : "pending_review"));
    const live = await LiveSummary.start({
      store,
      policies: new PolicyRegistry([TEAMS_POLICY]),
      now: () => new Date(at.getTime() + 1_000),
      queues: { intake: emptyQueue, deadLetters: emptyQueue },
    });
    const s = await live.summary();
    expect(s.decided).toBe(s.auto + s.toPeople);
    expect(summaryText(s)).toBe(
      "decided 10 = auto 6 + to people 4; review queue 3 waiting, 3 labels given; rejected 0, waiting 0, in DLQ 0",
    );
  });
});

describe("a batch's results file", () => {
  it("says each item's status as the table does (actioned once applied) and which model decided it", async () => {
    const folder = await mkdtemp(join(tmpdir(), "newcomer-results-"));
    const objects = new FsObjectStore(folder);
    const batches = new InMemoryBatchStore();
    const decisions = new InMemoryDecisionStore();
    const now = "2026-12-01T10:00:00.000Z";
    const counts = { lines: 2, accepted: 2, rejected: 0, decided: 0, auto: 0, human: 0, failed: 0 };
    await batches.createBatch({
      batchId: "b-1",
      policyId: "tickets",
      source: "tickets.jsonl",
      status: "running",
      counts: { ...counts, deadLettered: 0, reviewed: 0 },
      createdAt: now,
    });
    const decided = (itemId: string, route: "auto" | "human") => ({
      itemId,
      policyId: "tickets",
      policyVersion: 1,
      state: route,
      route,
      chosen: "billing",
      distribution: { billing: 0.9, technical: 0.1 },
      reason: route === "auto" ? "confident" : "below_threshold",
      status: route === "auto" ? "auto_approved" : "pending_review",
    });
    // The member keeps "auto_approved", the status it was decided with; the record moved on.
    for (const [itemId, route, status] of [
      ["A", "auto", "actioned"],
      ["B", "human", "pending_review"],
    ] as const) {
      await batches.recordMember("b-1", decided(itemId, route));
      await decisions.create({
        ...decided(itemId, route),
        status,
        reason: route === "auto" ? "confident" : "below_threshold",
        modelSha256: "ab12",
        createdAt: now,
        updatedAt: now,
        eventPublished: true,
      });
    }
    const outcome = await writeBatchFiles(
      {
        batches,
        objects,
        decisions,
        policies: new PolicyRegistry([TEAMS_POLICY]),
        files: { request: async () => {} },
        publisher: { publish: async () => {} },
        now: () => new Date(now),
      },
      "b-1",
    );
    expect(outcome).toBe("completed");
    const lines = (await readFile(join(folder, batchKeys("b-1").results), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((l) => [l.id, l.status, l.model, l.modelSha256])).toEqual([
      ["A", "actioned", DEFAULT_MODEL, "ab12"],
      ["B", "pending_review", DEFAULT_MODEL, "ab12"],
    ]);
  });
});

describe("which model decided", () => {
  const at = "2026-12-01T10:00:00.000Z";
  const decided: DecisionRecord = {
    itemId: "A",
    policyId: "tickets",
    policyVersion: 1,
    status: "actioned",
    route: "auto",
    reason: "confident",
    chosen: "billing",
    topProbability: 0.9,
    modelSha256: "ab12",
    createdAt: at,
    updatedAt: at,
    eventPublished: true,
  };
  const named = parsePolicy({ ...TEAMS_POLICY, model: "qwen-small" });

  it("is named on the item page for a record decided by one model, as a cascade's tiers name theirs", () => {
    expect(tierAnswers(decided, POLICY)).toMatch(/Decided by the endpoint('|&#39;)s own model\./);
    expect(tierAnswers(decided, named)).toContain("Decided by qwen-small.");
  });

  it("is named on the decisions page", () => {
    const filters = { policy: "", route: "", since: "", until: "", batch: "", problems: [] };
    const body = decisionsBody(
      { records: [decided], continued: false },
      filters,
      new PolicyRegistry([named]),
    );
    expect(body).toMatch(/<dt>model<\/dt><dd>qwen-small<\/dd><dt>model SHA-256<\/dt><dd><code>ab12<\/code>/);
  });
});

describe("the OpenAPI document", () => {
  const doc = openApiDocument("0.0.0") as {
    info: { license?: { name: string } };
    paths: Record<string, Record<string, { operationId?: string; security?: unknown[] }>>;
  };
  const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops));

  it("gives every operation an id of its own and says what security it needs (none), as a linter's recommended rules ask", () => {
    expect(operations.length).toBeGreaterThan(5);
    const ids = operations.map((op) => op.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.every((op) => Array.isArray(op.security))).toBe(true);
    expect(doc.info.license?.name).toBe("MIT");
  });
});

describe("a step silent for more than 2 s", () => {
  /** Timers run by hand: `advance(ms)` fires what is due. */
  function handTimers() {
    let now = 0;
    let pending: { at: number; run: () => void; id: number }[] = [];
    let ids = 0;
    return {
      timers: {
        setTimeout: (run: () => void, ms: number) => {
          pending.push({ at: now + ms, run, id: ++ids });
          return ids;
        },
        clearTimeout: (id: never) => {
          pending = pending.filter((p) => p.id !== (id as number));
        },
      },
      advance(ms: number) {
        now += ms;
        for (let due = pending.find((p) => p.at <= now); due; due = pending.find((p) => p.at <= now)) {
          pending = pending.filter((p) => p !== due);
          due.run();
        }
      },
    };
  }

  it("says what it is doing after 2 s, then again with the time so far, and nothing once it ended", async () => {
    const { timers, advance } = handTimers();
    const notes: string[] = [];
    let finish: (value: number) => void = () => {};
    const work = new Promise<number>((resolve) => {
      finish = resolve;
    });
    const step = slowStep((line) => notes.push(line), "downloading the results file", work, 2_000, timers);
    advance(1_999);
    expect(notes).toEqual([]);
    advance(1);
    advance(4_000);
    expect(notes).toEqual(["downloading the results file…", "downloading the results file… (6 s)"]);
    finish(7);
    expect(await step).toBe(7);
    advance(60_000);
    expect(notes).toHaveLength(2);
  });

  it("says nothing for a step that ends sooner", async () => {
    const { timers, advance } = handTimers();
    const notes: string[] = [];
    expect(
      await slowStep((line) => notes.push(line), "loading", Promise.resolve("done"), 2_000, timers),
    ).toBe("done");
    advance(10_000);
    expect(notes).toEqual([]);
  });
});

describe("progress notes", () => {
  it("are written on a terminal only (a pipe or log gains no line that depends on the machine's load)", () => {
    const lines: string[] = [];
    onTerminal({ isTTY: true }, (l) => lines.push(l))("on a terminal");
    onTerminal({ isTTY: false }, (l) => lines.push(l))("in a pipe");
    expect(lines).toEqual(["on a terminal"]);
  });
});

describe("npm run synth", () => {
  it("turns cdk's bundling lines into a short line per function, and leaves other lines alone", () => {
    expect(bundlingProgress("Bundling asset DecisionPipeline/Pipeline/Decide/Code/Stage...", 3)).toBe(
      "synth: bundling function 3: Pipeline/Decide",
    );
    expect(bundlingProgress("Bundling asset DecisionPipeline/Canary/Stage...", 4)).toBe(
      "synth: bundling function 4: Canary",
    );
    expect(bundlingProgress("[Warning at /DecisionPipeline/Bucket] something", 1)).toBeUndefined();
  });
});

describe("decide audit with samples labelled once", () => {
  const sample = (second: boolean) => ({
    stratum: "1|all",
    inclusionProbability: 0.02,
    chosen: "billing",
    ...(second ? { awaitingSecondReviewer: true } : {}),
  });

  it("says the samples wait for a second reviewer, not for review", () => {
    const all = Array.from({ length: 42 }, () => sample(true));
    expect(estimateText(estimateAutoError(all))).toBe(
      "no audit label yet (42 drawn, labelled once, waiting for a second reviewer)",
    );
    const some = [
      ...Array.from({ length: 30 }, () => sample(false)),
      ...Array.from({ length: 12 }, () => sample(true)),
    ];
    expect(estimateText(estimateAutoError(some))).toBe(
      "no audit label yet (42 drawn: 30 waiting for review, 12 for a second reviewer)",
    );
    expect(estimateText(estimateAutoError([sample(false)]))).toBe(
      "no audit label yet (1 drawn, waiting for review)",
    );
  });
});

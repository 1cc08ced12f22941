/**
 * The local mode loses nothing on a stop (issue 36, observation 4): `decide local` is killed with
 * SIGKILL in the middle of a flood, started again, stopped with Ctrl-C (SIGINT to its process
 * group, as a terminal sends it) while it works, and started a third time; then every item sent
 * has exactly one record, every automatic decision has been applied, every escalation queued for
 * review once, every event the records owe has gone out, and no queue holds anything. Before the
 * queues were kept on disk, the items waiting in them at the kill never got a record.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stopOrphanedDynamoDb } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { ensurePortsFree, type LocalPorts, resolveLocalPorts } from "../../infra/local/ports.ts";
import { documentClient, localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { allTime, everyDecision } from "../../shared/domain/decision-store.ts";
import { MAX_BATCH } from "../../shared/domain/message-queue.ts";
import { DECIDE } from "../helpers/decide-cli.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { demoModelPath, REPO_ROOT } from "../helpers/models.ts";
import { PROGRESS_BOUND_TEST_MS, waitForProgress, waitWhileProgressing } from "../helpers/progress.ts";

/**
 * Items in the flood: the nine samples again and again under new ids, enough that some still wait
 * at each stop (each comes after 20 more decisions). 100 made this the suite's longest file (140 s).
 */
const FLOOD = 60;
/** A stop may wait for nothing to change this long (a loaded machine) before the test fails. */
const STALL = { stallSeconds: 240 };

async function freeBase(): Promise<number> {
  for (;;) {
    const base = Math.min(await freePort(), 65_000);
    const free = await ensurePortsFree(resolveLocalPorts(base)).then(
      () => true,
      () => false,
    );
    if (free) return base;
  }
}

/** `decide local` in its own process group, so Ctrl-C can reach it and its Java child as a terminal's would. */
function startLocal(
  base: number,
  dataDir: string,
  model: string,
): { child: ChildProcess; output: () => string } {
  const child = spawn(
    process.execPath,
    [DECIDE, "local", "--no-samples", "--port-base", String(base), "--data-dir", dataDir, "--model", model],
    { cwd: REPO_ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const append = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  return { child, output: () => output };
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()));

function clients(ports: LocalPorts) {
  const store = new DynamoDbDecisionStore(
    documentClient(localServiceOptions(`http://127.0.0.1:${ports.dynamodb}`)),
    "decisions",
  );
  const sqs = sqsClient(localServiceOptions(`http://127.0.0.1:${ports.sqs}`));
  const queue = (name: string) => new SqsQueue(sqs, `http://127.0.0.1:${ports.sqs}/123456789012/${name}`);
  return { store, queue, destroy: () => sqs.destroy() };
}

/** Every record of the flood, read a page at a time (undefined while DynamoDB Local does not answer). */
async function floodRecords(store: DynamoDbDecisionStore): Promise<DecisionRecord[] | undefined> {
  try {
    const records: DecisionRecord[] = [];
    const filter = {
      ...allTime(new Date()),
      policyIds: ["ticket-routing", "content-moderation", "pre-screen"],
    };
    for await (const record of everyDecision(store, filter))
      if (record.itemId.includes("-F")) records.push(record);
    return records;
  } catch {
    return undefined;
  }
}

/**
 * Waits until the local mode answers on its intake queue (the queues exist once it has started
 * them), failing when it exits or its output stops growing.
 */
async function ready(local: ReturnType<typeof startLocal>, intake: SqsQueue): Promise<void> {
  await waitWhileProgressing(
    "the local mode's start",
    async () => {
      if (local.child.exitCode !== null)
        throw new Error(`decide local exited: ${local.output().slice(-2000)}`);
      return intake.depth().then(
        () => true,
        () => false,
      );
    },
    () => local.output().length,
    STALL,
    () => local.output().slice(-2000),
  );
}

/** Waits until `count` more records than `from` exist, failing only on lack of progress. */
async function decidedMore(store: DynamoDbDecisionStore, from: number, count: number, say: () => string) {
  await waitForProgress(
    `${count} more decisions`,
    async () => Math.max(0, from + count - ((await floodRecords(store))?.length ?? 0)),
    STALL,
    say,
  );
}

describe("the local mode under SIGKILL and Ctrl-C", () => {
  it(
    "decides every item sent exactly once, applies every action once, and leaves no queue holding anything",
    async () => {
      const dataDir = await mkdtemp(join(tmpdir(), "local-kill-"));
      const base = await freeBase();
      const ports = resolveLocalPorts(base);
      const { store, queue, destroy } = clients(ports);
      const intake = queue("intake");
      const samples = (await import("node:fs")).readFileSync(
        join(REPO_ROOT, "events/items/samples.jsonl"),
        "utf8",
      );
      const lines = samples.split("\n").filter(Boolean);
      const items = Array.from({ length: FLOOD }, (_, i) => {
        const item = JSON.parse(lines[i % lines.length]!) as { id: string };
        return JSON.stringify({ ...item, id: `${item.id}-F${i}` });
      });
      // The demo model fitted once per machine, not once per data folder.
      const model = await demoModelPath();
      let local = startLocal(base, dataDir, model);
      try {
        await ready(local, intake);
        for (let i = 0; i < items.length; i += MAX_BATCH) {
          const failed = await intake.sendBatch(
            items.slice(i, i + MAX_BATCH).map((body, j) => ({ id: String(j), body })),
          );
          expect(failed).toEqual([]);
        }
        // SIGKILL once some are decided and most still wait: node alone (its DynamoDB Local lives on).
        await decidedMore(store, 0, 20, local.output);
        local.child.kill("SIGKILL");
        await exited(local.child);
        const afterKill = (await floodRecords(store))?.length ?? 0;
        expect(afterKill).toBeLessThan(FLOOD);

        // Started again, then Ctrl-C to the whole group while it works.
        local = startLocal(base, dataDir, model);
        await ready(local, intake);
        await decidedMore(store, afterKill, 20, local.output);
        process.kill(-local.child.pid!, "SIGINT");
        await exited(local.child);
        // A clean stop, or (when Ctrl-C came while it was still starting) the signal's default.
        const ending = local.child.exitCode ?? local.child.signalCode;
        expect(ending === 0 || ending === "SIGINT", local.output().slice(-2000)).toBe(true);

        // The third start finishes the work.
        local = startLocal(base, dataDir, model);
        await ready(local, intake);
        const settled = (records: DecisionRecord[]) =>
          records.filter(
            (r) =>
              r.eventPublished === true &&
              r.status !== "auto_approved" &&
              (r.status !== "pending_review" || r.reviewQueuedBy !== undefined) &&
              (r.status !== "actioned" || r.actionEventPublished === true),
          ).length;
        await waitForProgress(
          "the flood after two stops",
          async () => FLOOD - settled((await floodRecords(store)) ?? []),
          STALL,
          local.output,
        );
        const records = (await floodRecords(store))!;
        const byItem = new Map<string, number>();
        for (const record of records) byItem.set(record.itemId, (byItem.get(record.itemId) ?? 0) + 1);
        const sent = items.map((body) => (JSON.parse(body) as { id: string }).id);
        expect(sent.filter((id) => !byItem.has(id))).toEqual([]); // lost
        expect([...byItem].filter(([, n]) => n > 1)).toEqual([]); // decided twice
        const auto = records.filter((r) => r.route === "auto");
        expect(auto.length).toBeGreaterThan(0);
        // Applied once: the action names the decision's own event (a conditional transition).
        for (const record of auto)
          expect(record).toMatchObject({ status: "actioned", actionEventPublished: true });
        expect(records.filter((r) => r.route === "human").every((r) => r.reviewQueuedBy)).toBe(true);
        // Nothing waits anywhere: the intake, its dead letters, the targets' queues.
        for (const name of ["intake", "intake-dlq", "auto-action", "review", "auto-action-dlq", "review-dlq"])
          await waitForProgress(
            `the ${name} queue`,
            async () => (await queue(name).depth()).visible,
            STALL,
            local.output,
          );
      } finally {
        if (local.child.exitCode === null && local.child.signalCode === null) {
          process.kill(-local.child.pid!, "SIGINT");
          await exited(local.child);
        }
        await stopOrphanedDynamoDb(join(dataDir, "dynamodb"));
        destroy();
      }
    },
    PROGRESS_BOUND_TEST_MS,
  );
});

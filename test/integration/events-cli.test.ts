/**
 * `decide events` on a real local bus (the one `npm start` runs): it prints the events the bus
 * delivered, in the envelope its rules' targets receive, filtered by detail-type, policy or any
 * EventBridge pattern; with --follow it prints new events as they come and stops on Ctrl-C
 * (exit 0); a bus whose log dropped events says how many. Before, nothing showed the events that
 * flow locally (`aws events list-rules` answers UnknownOperationException there).
 */
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BusEvent, type LocalEventBus, startEventBus } from "../../infra/local/event-bus.ts";
import { DECIDE, runDecide } from "../helpers/decide-cli.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { waitForProgress } from "../helpers/progress.ts";

let bus: LocalEventBus;
let client: EventBridgeClient;
/** Only the bus: no inherited AWS settings, as in a fresh terminal. */
let env: NodeJS.ProcessEnv;

/** Puts events of `detailType` for `itemIds` under `policyId` on the bus, in one PutEvents call. */
async function put(detailType: string, itemIds: string | string[], policyId: string): Promise<void> {
  const entries = [itemIds].flat().map((itemId) => ({
    EventBusName: "decisions",
    Source: "decision-pipeline",
    DetailType: detailType,
    Detail: JSON.stringify({ eventId: `e-${itemId}`, itemId, policyId, route: "auto" }),
  }));
  const answer = await client.send(new PutEventsCommand({ Entries: entries }));
  expect(answer.FailedEntryCount).toBe(0);
}

beforeAll(async () => {
  // A small log, so that a reader who falls behind is told what it missed.
  bus = await startEventBus({ name: "decisions", recentEvents: 50 });
  client = new EventBridgeClient({
    region: "us-east-1",
    endpoint: bus.endpoint,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  env = { PATH: process.env.PATH, HOME: process.env.HOME, AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint };
  await put("Decision Made", "TICKET-1", "ticket-routing");
  await put("Decision Rejected", "BAD-1", "ticket-routing");
  await put("Decision Made", "POST-1", "content-moderation");
});
afterAll(async () => {
  client?.destroy();
  await bus?.stop();
});

/** The events printed one a line. */
function printed(stdout: string): BusEvent[] {
  return stdout
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as BusEvent);
}

describe("decide events", () => {
  it("prints the delivered events in the envelope a consumer of the bus receives", async () => {
    const run = await runDecide(["events"], env);
    expect(run.code, run.stderr).toBe(0);
    const events = printed(run.stdout);
    expect(events.map((e) => e.detail.itemId)).toEqual(["TICKET-1", "BAD-1", "POST-1"]);
    // Exactly what the bus handed its rules' targets: the same envelope, field for field.
    expect(events).toEqual(bus.events);
    expect(Object.keys(events[0]!).sort()).toEqual(
      ["account", "detail", "detail-type", "id", "region", "resources", "source", "time", "version"].sort(),
    );
  });

  it("filters by detail-type and policy, or by any EventBridge pattern", async () => {
    const made = await runDecide(["events", "--detail-type", "Decision Made"], env);
    expect(printed(made.stdout).map((e) => e.detail.itemId)).toEqual(["TICKET-1", "POST-1"]);
    const moderation = await runDecide(
      ["events", "--detail-type", "Decision Made", "--policy", "content-moderation"],
      env,
    );
    expect(printed(moderation.stdout).map((e) => e.detail.itemId)).toEqual(["POST-1"]);
    const pattern = await runDecide(
      ["events", "--pattern", '{"detail": {"itemId": [{"prefix": "BAD-"}]}}', "--last", "5"],
      env,
    );
    expect(printed(pattern.stdout).map((e) => e.detail.itemId)).toEqual(["BAD-1"]);
    const last = await runDecide(["events", "--last", "1"], env);
    expect(printed(last.stdout).map((e) => e.detail.itemId)).toEqual(["POST-1"]);
  });

  it("refuses a malformed pattern and says what a fresh shell lacks", async () => {
    const bad = await runDecide(["events", "--pattern", '{"detail-type": "Decision Made"}'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--pattern:");
    const fresh = await runDecide(["events"], { PATH: process.env.PATH, AWS_ENDPOINT_URL_EVENTBRIDGE: "" });
    expect(fresh.code).toBe(2);
    expect(fresh.stderr).toContain("AWS_ENDPOINT_URL_EVENTBRIDGE is not set and --bus-url is not given");
  });

  it("reads the bus from the env file npm start writes (--local-env)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "events-env-"));
    const file = join(dir, "env");
    await writeFile(file, `# test\nexport AWS_ENDPOINT_URL_EVENTBRIDGE='${bus.endpoint}'\n`);
    const run = await runDecide(["events", "--local-env", file, "--last", "1"], {
      AWS_ENDPOINT_URL_EVENTBRIDGE: "",
    });
    expect(run.code, run.stderr).toBe(0);
    expect(printed(run.stdout).map((e) => e.detail.itemId)).toEqual(["POST-1"]);
    const missing = await runDecide(["events", "--local-env", join(dir, "nothing")], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no such file (npm start writes it as it starts: is it running?)");
  });

  it("follows: prints each new matching event as it comes, says what it missed, stops on Ctrl-C with 0", async () => {
    const child = spawn(
      process.execPath,
      [DECIDE, "events", "--follow", "--detail-type", "Decision Made", "--last", "0"],
      { cwd: REPO_ROOT, env },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      const where = () => `stdout: ${out.slice(-500)} stderr: ${err.slice(-500)}`;
      await waitForProgress(
        "events --follow starts",
        async () => (err.includes("following") ? 0 : 1),
        { stallSeconds: 60 },
        where,
      );
      await put("Decision Made", "LIVE-1", "ticket-routing");
      await put("Decision Rejected", "LIVE-2", "ticket-routing");
      await put("Decision Made", "LIVE-3", "pre-screen");
      await waitForProgress(
        "events --follow prints",
        async () => Math.max(0, 2 - printed(out).length),
        { stallSeconds: 60 },
        where,
      );
      // More than the log holds while the reader is paused: told how many it could not read.
      child.kill("SIGSTOP");
      for (let i = 0; i < 12; i++)
        await put(
          "Decision Made",
          Array.from({ length: 10 }, (_, j) => `FLOOD-${i}-${j}`),
          "ticket-routing",
        );
      child.kill("SIGCONT");
      await waitForProgress(
        "events --follow reads the flood",
        async () => (out.includes("FLOOD-11-9") ? 0 : 1),
        { stallSeconds: 60 },
        where,
      );
      child.kill("SIGINT");
      expect(await closed).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    const events = printed(out);
    expect(events.slice(0, 2).map((e) => e.detail.itemId)).toEqual(["LIVE-1", "LIVE-3"]);
    expect(events.every((e) => e["detail-type"] === "Decision Made")).toBe(true);
    // 120 put while the reader was paused, 50 held: each is printed or counted as missed.
    const missed = [
      ...err.matchAll(/\(([\d,]+) events? left the bus's log before (?:it|they) could be read\)/g),
    ];
    const printedFlood = events.filter((e) => String(e.detail.itemId).startsWith("FLOOD-")).length;
    expect(missed.length, err).toBeGreaterThan(0);
    expect(printedFlood + missed.reduce((sum, m) => sum + Number(m[1]!.replaceAll(",", "")), 0)).toBe(120);
    expect(printedFlood).toBeLessThanOrEqual(62);
  });
});

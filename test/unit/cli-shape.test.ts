/**
 * Every `decide` command is parse -> run -> print (cli/command.ts): parse reads the flags and the
 * environment it is given (never process.env), and print formats a result made by hand, so each
 * step is checked alone, without AWS, a model or a file.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MissingSettingError, START_HINT, UsageError } from "../../cli/args.ts";
import { auditCommand } from "../../cli/audit.ts";
import { batchCommand } from "../../cli/batch/batch.ts";
import { calibrateCommand } from "../../cli/calibrate/calibrate.ts";
import { capacityCommand } from "../../cli/capacity/capacity.ts";
import { localCommand } from "../../cli/local.ts";
import { COMMANDS } from "../../cli/main.ts";
import { makeModelCommand } from "../../cli/make-model.ts";
import { publishCommand } from "../../cli/publish.ts";
import { replayCommand } from "../../cli/replay.ts";
import { scoreCommand } from "../../cli/score.ts";
import { serveCommand } from "../../cli/serve.ts";
import { statusCommand } from "../../cli/status.ts";
import { whatIfCommand } from "../../cli/what-if/what-if.ts";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("the COMMANDS table", () => {
  it("gives every command parse and run, and print to every command that finishes", async () => {
    for (const [name, entry] of Object.entries(COMMANDS)) {
      const { command, usage } = await entry.load();
      expect(typeof command.parse, name).toBe("function");
      expect(typeof command.run, name).toBe("function");
      expect(usage, name).toContain(`decide ${name}`);
      // local and serve run until a signal: no result to print.
      expect("print" in command, name).toBe(name !== "local" && name !== "serve");
    }
  });
});

describe("status", () => {
  it("reads DECISIONS_TABLE and the queue URLs from the env it is given, not from process.env", () => {
    vi.stubEnv("DECISIONS_TABLE", "from-process-env");
    const options = statusCommand.parse(["--since", "2026-01-02"], {
      DECISIONS_TABLE: "given-table",
      INTAKE_QUEUE_URL: "http://127.0.0.1:9324/q/intake",
      POLICIES_DIR: "policies-here",
    });
    expect(options.table).toBe("given-table");
    expect(options.queues.intake).toBe("http://127.0.0.1:9324/q/intake");
    expect(options.queues.review).toBeUndefined();
    expect(options.policiesDir).toBe("policies-here");
    expect(options.since).toBe("2026-01-02T00:00:00.000Z");
  });

  it("names the missing variable with the npm start hint when the env lacks it", () => {
    vi.stubEnv("DECISIONS_TABLE", "from-process-env");
    expect(() => statusCommand.parse([], {})).toThrow(MissingSettingError);
    expect(() => statusCommand.parse([], {})).toThrow(
      `DECISIONS_TABLE is not set and --table is not given: ${START_HINT}`,
    );
    expect(START_HINT).toContain("is npm start running?");
    expect(() => statusCommand.parse(["--since", "soon"], { DECISIONS_TABLE: "t" })).toThrow(
      '--since must be a date (YYYY-MM-DD) or an ISO time, got "soon"',
    );
  });

  it("prints the counts as text, or as JSON with --json", () => {
    const status = {
      records: { "ticket-routing": { decided: 3 } },
      automation: { "ticket-routing": { automated: 2, audit_sample: 1, escalated: 0, actedOn: 3 } },
      certificates: {},
      queues: { intake: { visible: 2, inFlight: 1 } },
      deadLetters: {},
      asyncBacklog: { objects: 2, items: 776, oldestSubmittedAt: "2026-12-01T10:00:00.000Z" },
    };
    const text = statusCommand.print(status, statusCommand.parse([], { DECISIONS_TABLE: "t" }));
    expect(text.exitCode).toBe(0);
    expect(text.lines).toContain("  intake       2 waiting, 1 in flight");
    expect(text.lines).toContain(
      "  ticket-routing         3 acted on (2 automated, 1 audit sample, which people label first), 0 escalated",
    );
    expect(text.lines).toContain(
      "async backlog: 2 objects (776 items) open on the async endpoint, oldest submitted 2026-12-01T10:00:00.000Z",
    );
    expect(text.lines.at(-1)).toBe("  (none)");
    const json = statusCommand.print(status, statusCommand.parse(["--json"], { DECISIONS_TABLE: "t" }));
    expect(JSON.parse(json.lines.join("\n"))).toEqual(status);
  });
});

describe("audit", () => {
  it("takes the table from the env given, and prints JSON or nothing for no policy", () => {
    const options = auditCommand.parse(["--json"], { DECISIONS_TABLE: "given" });
    expect(options.table).toBe("given");
    expect(() => auditCommand.parse([], {})).toThrow(
      "DECISIONS_TABLE is not set and --from-table is not given: is npm start running?",
    );
    // A window that starts in the future holds nothing: refused, not answered with an empty all-clear.
    expect(() => auditCommand.parse(["--since", "2999-01-01"], { DECISIONS_TABLE: "given" })).toThrow(
      "--since 2999-01-01 is in the future: nothing was decided after it yet",
    );
    expect(auditCommand.print([], options)).toEqual({ lines: ["[]"], exitCode: 0 });
    expect(auditCommand.print([], { ...options, json: false })).toEqual({ lines: [], exitCode: 0 });
  });
});

describe("publish", () => {
  it("sends to INTAKE_QUEUE_URL of the env given, and says the counts", () => {
    const options = publishCommand.parse(["items.jsonl"], { INTAKE_QUEUE_URL: "http://q" });
    expect(options.target).toEqual({ queueUrl: "http://q" });
    expect(options.resumeFile).toBe("items.jsonl.sent");
    expect(() => publishCommand.parse(["items.jsonl"], {})).toThrow(
      `INTAKE_QUEUE_URL is not set and --queue-url (or --event-bus NAME) is not given: ${START_HINT}`,
    );
    const printed = publishCommand.print({ dryRun: false, sent: 4, skipped: 1, refused: 2 }, options);
    expect(printed).toEqual({
      lines: ["4 sent, 1 already sent before, 2 refused lines not sent"],
      exitCode: 1,
    });
  });
});

describe("replay", () => {
  it("takes DLQ_URL and INTAKE_QUEUE_URL from the env given, and prints the counts", () => {
    const options = replayCommand.parse(["--dry-run"], {
      DLQ_URL: "http://dlq",
      INTAKE_QUEUE_URL: "http://q",
    });
    expect(options).toMatchObject({ kind: "replay", target: { dlqUrl: "http://dlq", home: "http://q" } });
    expect(() => replayCommand.parse(["--from", "intake"], {})).toThrow("DEAD_LETTER_ROUTES is not set");
    const printed = replayCommand.print(
      {
        kind: "replay",
        dryRun: true,
        report: { matched: [], failed: [], moved: 0, left: 0 },
      } as unknown as Parameters<typeof replayCommand.print>[0],
      options,
    );
    expect(printed).toEqual({ lines: ["0 matched, 0 moved, 0 left in the dead-letter queue"], exitCode: 0 });
    expect(replayCommand.print({ kind: "redrive", handle: "h-1" }, options).lines).toEqual([
      "redrive started: task h-1",
    ]);
  });
});

describe("batch", () => {
  it("parses each subcommand against the env given, and prints a list", () => {
    const env = { DECISIONS_TABLE: "t", BATCH_FOLDER: "/tmp/b", BATCH_QUEUE_URL: "http://bq" };
    expect(() => batchCommand.parse(["submit", "f.jsonl", "--policy", "p"], env)).toThrow(
      `BATCH_FILES_QUEUE_URL is not set: ${START_HINT}`,
    );
    const submit = batchCommand.parse(["submit", "f.jsonl", "--policy", "p"], {
      ...env,
      BATCH_FILES_QUEUE_URL: "http://fq",
    });
    expect(submit).toMatchObject({
      sub: "submit",
      local: { queueUrl: "http://bq", filesQueueUrl: "http://fq" },
    });
    expect(() => batchCommand.parse(["list"], { DECISIONS_TABLE: "t" })).toThrow("no batch files");
    const list = batchCommand.parse(["list", "--limit", "5"], env);
    expect(list).toMatchObject({ sub: "list", limit: 5, where: { table: "t", folder: "/tmp/b" } });
    expect(batchCommand.print({ sub: "list", batches: [] }, list)).toEqual({
      lines: ["no batches yet"],
      exitCode: 0,
    });
    expect(batchCommand.print({ sub: "status", followed: { interrupted: true } }, list).exitCode).toBe(130);
  });
});

describe("calibrate", () => {
  it("reads EVENT_BUS_NAME and DECISIONS_TABLE from the env given, and prints a check", () => {
    const check = calibrateCommand.parse(["--check", "--baseline", "b.json", "--recent", "r.jsonl"], {
      EVENT_BUS_NAME: "bus",
    });
    expect(check).toEqual({ mode: "check", baseline: "b.json", recent: "r.jsonl", eventBus: "bus" });
    expect(calibrateCommand.parse(["--propose"], { DECISIONS_TABLE: "t" })).toMatchObject({ table: "t" });
    expect(() => calibrateCommand.parse(["--propose"], {})).toThrow(MissingSettingError);
    expect(() => calibrateCommand.parse(["--policy", "p"], {})).toThrow("--input is required");
    const printed = calibrateCommand.print(
      {
        mode: "check",
        checked: {
          policy: { id: "p", version: 2 },
          result: { decisions: 10, drifted: true, checks: [] },
          publishedTo: "bus",
        },
      } as unknown as Parameters<typeof calibrateCommand.print>[0],
      check,
    );
    expect(printed).toEqual({
      lines: ["10 recent decisions of p@2: drift found", 'published "Calibration Drift" to bus'],
      exitCode: 3,
    });
  });
});

describe("the other commands", () => {
  it("make-model and score parse their flags and print what they made", () => {
    const made = makeModelCommand.parse(["--shape", "demo", "--out", "d.gguf"], {});
    expect(made).toMatchObject({ shape: "demo", out: "d.gguf" });
    expect(() => makeModelCommand.parse(["--shape", "huge"], {})).toThrow(UsageError);
    expect(
      makeModelCommand.print({ shape: "demo", out: "d.gguf", words: 7, bytes: 2 ** 20 }, made).lines,
    ).toEqual(["wrote d.gguf: demo bag-of-words model (not a language model), 7 words, 1.0 MiB"]);
    const score = scoreCommand.parse(["--model", "m.gguf", "--input", "-", "--threads", "2"], {});
    expect(score).toMatchObject({ threads: 2, inputPath: "-" });
    const result = { questions: [] } as unknown as Parameters<typeof scoreCommand.print>[0];
    expect(JSON.parse(scoreCommand.print(result, score).lines.join("\n"))).toEqual({ questions: [] });
  });

  it("capacity, what-if, local and serve validate in parse, before any work", () => {
    expect(() => capacityCommand.parse([], {})).toThrow("--rate is required");
    expect(capacityCommand.parse(["--rate", "2", "--for", "10m"], {}).load).toEqual({
      ratePerSecond: 2,
      durationSeconds: 600,
    });
    expect(() => whatIfCommand.parse(["--candidate", "c.json"], {})).toThrow(
      "DECISIONS_TABLE is not set and --from-table is not given: is npm start running?",
    );
    expect(whatIfCommand.parse(["--candidate", "c.json"], { DECISIONS_TABLE: "t" }).table).toBe("t");
    // The reports go beside the candidate (a later what-if of another proposal no longer
    // overwrites them in ./calibration-out), unless --out says where.
    const proposal = "calibration-out/p/v2-from-48-labels/policy.json";
    expect(whatIfCommand.parse(["--candidate", proposal, "--from-table", "t"], {}).out).toBe(
      "calibration-out/p/v2-from-48-labels",
    );
    expect(whatIfCommand.parse(["--candidate", proposal, "--from-table", "t", "--out", "o"], {}).out).toBe(
      "o",
    );
    expect(localCommand.parse([], { DECIDE_LOCAL_PORT_BASE: "20000" }).mode.ports?.endpoint).toBe(20000);
    expect(() => localCommand.parse([], { DECIDE_LOCAL_PORT_BASE: "1" })).toThrow("--port-base");
    vi.stubEnv("PORT", "9999");
    expect(serveCommand.parse([], { PORT: "8123" }).port).toBe(8123);
    expect(() => serveCommand.parse([], { PORT: "http" })).toThrow(UsageError);
  });
});

/**
 * The `decide` command as a user runs it: a real child process through bin/decide.js.
 */
import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runDecide } from "../helpers/decide-cli.ts";

/** Runs `decide` with extra environment variables. */
const decideWith = (args: string[], env: Record<string, string>) => runDecide(args, env);
const decide = (args: string[]) => runDecide(args);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "decide-cli-"));
});

describe("decide CLI", () => {
  it("makes the tiny model and scores the sample decision on it", async () => {
    const model = join(dir, "tiny.gguf");
    const made = await decide(["make-model", "--shape", "tiny", "--out", model]);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/wrote .*tiny\.gguf: tiny, F32/);
    const scored = await decide([
      "score",
      "--model",
      model,
      "--input",
      "events/decisions/ticket-routing.json",
      "--threads",
      "1",
    ]);
    expect(scored.code).toBe(0);
    const result = JSON.parse(scored.stdout);
    expect(result.answers.map((a: { key: string }) => a.key)).toEqual([
      "team",
      "urgency",
      "refund_requested",
    ]);
    expect(result.answers[0].optionIds).toEqual(["billing", "technical", "account", "out_of_scope"]);
    expect(typeof result.answers[1].score).toBe("number");
    expect(typeof result.answers[2].noul).toBe("number");
  });

  it("explains usage mistakes with exit code 2 and runtime errors with exit code 1", async () => {
    const unknown = await decide(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    const badShape = await decide(["make-model", "--shape", "huge", "--out", join(dir, "x.gguf")]);
    expect(badShape.code).toBe(2);
    expect(badShape.stderr).toMatch(
      /--shape must be one of demo, demo-large, tiny, qwen2-0\.5b, qwen2-1\.5b/,
    );
    const missing = await decide([
      "score",
      "--model",
      join(dir, "absent.gguf"),
      "--input",
      "events/decisions/ticket-routing.json",
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/absent\.gguf: cannot be read/);
    expect(missing.stderr).not.toMatch(/at .*\.ts:\d+/); // no stack trace
    const bad = join(dir, "bad.json");
    await writeFile(
      bad,
      JSON.stringify({
        state: "x",
        questions: { q: { type: "choice", instructions: "Pick", criteria: { a: "A" } } },
      }),
    );
    const invalid = await decide(["score", "--model", join(dir, "tiny.gguf"), "--input", bad]);
    expect(invalid.code).toBe(1);
    // The request `decide score` takes is the System One request, refused as the endpoint refuses it.
    expect(invalid.stderr).toMatch(/questions\.q\.criteria: must hold 2 to 16 options, got 1/);
  });

  it("explains a batch command given without what it needs, before reaching any service", async () => {
    const noId = await decide(["batch", "status"]);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toMatch(/give the batch id: decide batch status <batch id>/);
    const unknown = await decide(["batch", "stauts", "b-x"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown batch command "stauts" \(submit, status, results, list\)/);
    const noPolicy = await decide(["batch", "submit", "events/items/moderation-batch.jsonl"]);
    expect(noPolicy.code).toBe(2);
    expect(noPolicy.stderr).toMatch(/--policy is required/);
    // A device has no end: it was read into memory (1 GB in 30 s) before anything was said.
    const endless = await decideWith(["batch", "submit", "/dev/zero", "--policy", "content-moderation"], {
      DECISIONS_TABLE: "decisions",
      BATCH_FOLDER: dir,
      BATCH_QUEUE_URL: "http://127.0.0.1:1/123456789012/batch",
      BATCH_FILES_QUEUE_URL: "http://127.0.0.1:1/123456789012/batch-files",
    });
    expect(endless.code).toBe(2);
    expect(endless.stderr).toMatch(/\/dev\/zero is not a regular file: a batch is a file with an end/);
    const nowhere = await decideWith(["batch", "list"], {
      DECISIONS_TABLE: "decisions",
      BATCH_BUCKET: "",
      BATCH_FOLDER: "",
    });
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toMatch(
      /no batch files: give --bucket NAME \(deployed\) or --folder DIR \(local\)/,
    );
  });

  it("guides a newcomer: no command exits 2, typos get a suggestion, nothing running gets advice, no stack", async () => {
    const none = await decide([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no command given/);
    expect(none.stderr).toMatch(/status\s+counts records per state/);
    const typo = await decide(["stauts"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/did you mean "status"\?/);
    const unreachable = await decideWith(["status", "--table", "decisions"], {
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "x",
      AWS_SECRET_ACCESS_KEY: "x",
      AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:1",
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/could not reach the service at 127\.0\.0\.1:1/);
    expect(unreachable.stderr).toMatch(/Is `npm start` running\?/);
    expect(unreachable.stderr).not.toMatch(/at .*\.(ts|js):\d+/);
  });

  it("says what a fresh shell lacks: the variable npm start exports, with the hint, in one line", async () => {
    const fresh = { DECISIONS_TABLE: "", BATCH_FOLDER: "", BATCH_BUCKET: "", INTAKE_QUEUE_URL: "" };
    const hint =
      "is npm start running? source the env file it wrote (source .cache/local/env) or pass --local-env FILE";
    for (const args of [["status"], ["batch", "list"], ["batch", "status", "b-x"]]) {
      const result = await decideWith(args, fresh);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toBe(
        `decide ${args[0]}: DECISIONS_TABLE is not set and --table is not given: ${hint}\n` +
          `see: npx decide ${args[0]} --help\n`,
      );
    }
    const propose = await decideWith(["calibrate", "--propose"], fresh);
    expect(propose.code).toBe(2);
    expect(propose.stderr).toBe(
      `decide calibrate: DECISIONS_TABLE is not set and --from-table is not given: ${hint}\n` +
        "see: npx decide calibrate --help\n",
    );
    const replay = await decideWith(["replay"], { ...fresh, DLQ_URL: "", AWS_REGION: "us-east-1" });
    expect(replay.code).toBe(2);
    expect(replay.stderr).toBe(
      `decide replay: DLQ_URL is not set and --dlq-url (or --from SOURCE) is not given: ${hint}\n` +
        "see: npx decide replay --help\n",
    );
    const from = await decideWith(["replay", "--from", "intake"], { ...fresh, DEAD_LETTER_ROUTES: "" });
    expect(from.code).toBe(2);
    expect(from.stderr).toBe(
      `decide replay: DEAD_LETTER_ROUTES is not set and --routes is not given: ${hint}\n` +
        "see: npx decide replay --help\n",
    );
  });

  it("gives a usage mistake one line and where to read more, and unknown flags a 'did you mean'", async () => {
    const typo = await decide(["status", "--tabel", "decisions"]);
    expect(typo.stderr).toBe(
      "decide status: unknown flag --tabel; did you mean --table?\nsee: npx decide status --help\n",
    );
    const noValue = await decide(["batch", "status", "b-x", "--table"]);
    expect(noValue.stderr).toBe("decide batch: --table needs a value\nsee: npx decide batch --help\n");
    // calibrate's usage is about 35 lines: a mistake no longer prints it after the reason.
    const bins = await decide([
      "calibrate",
      "--input",
      "x.jsonl",
      "--policy",
      "ticket-routing",
      "--bins",
      "1",
    ]);
    expect(bins.code).toBe(2);
    expect(bins.stderr).toBe(
      "decide calibrate: --bins must be an integer from 2 to 50\nsee: npx decide calibrate --help\n",
    );
    const flag = await decide(["replay", "--form", "intake"]);
    expect(flag.stderr).toBe(
      "decide replay: unknown flag --form; did you mean --from?\nsee: npx decide replay --help\n",
    );
    const source = await decide(["replay", "--from", "intak", "--dry-run"]);
    expect(source.code).toBe(2);
    expect(source.stderr).toMatch(
      /^decide replay: --from: unknown dead-letter source "intak"; did you mean "intake"\? \(one of intake, batch, .*job-failures, async-results\)\nsee: npx decide replay --help\n$/,
    );
    const unknown = await decide(["stauts"]);
    expect(unknown.stderr).toBe(
      'decide: unknown command "stauts"; did you mean "status"?\nsee: npx decide --help\n',
    );
  });

  it("stores no batch file when the local services do not answer (no orphan batch)", async () => {
    const folder = join(dir, "bucket");
    const down = await decideWith(
      ["batch", "submit", "events/items/moderation-batch.jsonl", "--policy", "content-moderation"],
      {
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "x",
        AWS_SECRET_ACCESS_KEY: "x",
        AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:1",
        AWS_ENDPOINT_URL_SQS: "http://127.0.0.1:1",
        DECISIONS_TABLE: "decisions",
        BATCH_FOLDER: folder,
        BATCH_QUEUE_URL: "http://127.0.0.1:1/123456789012/batch",
        BATCH_FILES_QUEUE_URL: "http://127.0.0.1:1/123456789012/batch-files",
      },
    );
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/could not reach the service at 127\.0\.0\.1:1/);
    expect(down.stdout).not.toMatch(/stored as/);
    expect(existsSync(folder)).toBe(false);
  });

  it("prints help", async () => {
    const help = await decide(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/make-model/);
    expect(help.stdout).toMatch(/score/);
  });
});

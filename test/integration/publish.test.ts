/**
 * `decide publish` against a real local SQS: a 1,000-line file with 5 bad lines sends 995 and
 * reports the 5 by line number; a second run resumes and sends nothing again; CSV input; plain
 * progress lines when not on a terminal; "Decision Requested" events to a bus.
 */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { createSqsServer } from "local-aws-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEventBus, startEventBus } from "../../infra/local/event-bus.ts";
import { RULES } from "../../shared/domain/topology.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const run = promisify(execFile);
let sqsServer: { close: () => void };
let sqs: SQSClient;
let env: NodeJS.ProcessEnv;
let dir: string;

beforeAll(async () => {
  const port = await freePort();
  sqsServer = await createSqsServer({ port, hostname: "127.0.0.1" });
  env = {
    ...process.env,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_SQS: `http://127.0.0.1:${port}`,
  };
  sqs = new SQSClient({
    region: "us-east-1",
    endpoint: env.AWS_ENDPOINT_URL_SQS,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  dir = await mkdtemp(join(tmpdir(), "publish-"));
});
afterAll(() => {
  sqs?.destroy();
  sqsServer?.close();
});

async function publish(args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [join(REPO_ROOT, "bin", "decide.js"), "publish", ...args],
      { cwd: REPO_ROOT, env: { ...env, ...extraEnv } },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    return error as { code: number; stdout: string; stderr: string };
  }
}

async function drain(queueUrl: string): Promise<string[]> {
  const ids: string[] = [];
  // A short poll may come back empty while messages remain: three empty answers in a row end it.
  for (let empty = 0; empty < 3; ) {
    const batch = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 300,
      }),
    );
    empty = batch.Messages?.length ? 0 : empty + 1;
    for (const m of batch.Messages ?? []) ids.push((JSON.parse(m.Body!) as { id: string }).id);
  }
  return ids;
}

describe("decide publish", () => {
  it("sends 995 of 1,000 lines, reports the 5 bad ones by line, and resumes without re-sending", async () => {
    const queue = await sqs.send(new CreateQueueCommand({ QueueName: "publish-intake" }));
    const lines = Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify({ id: `P-${i}`, policy: "ticket-routing", state: `ticket ${i}` }),
    );
    lines[9] = "{broken json";
    lines[99] = JSON.stringify({ id: "P-99", policy: "ticket-routing", state: "" });
    lines[199] = JSON.stringify({ id: "P-199", policy: "no-such-policy", state: "x" });
    lines[499] = JSON.stringify({ id: "bad id with spaces", policy: "ticket-routing", state: "x" });
    lines[998] = JSON.stringify({ id: "P-5", policy: "ticket-routing", state: "again" });
    const file = join(dir, "items.jsonl");
    await writeFile(file, `${lines.join("\n")}\n`);

    const first = await publish([file, "--queue-url", queue.QueueUrl!]);
    expect(first.code).toBe(1); // some lines were refused
    expect(first.stdout).toMatch(/995 sent, 0 already sent before, 5 refused lines not sent/);
    const reported = [...first.stderr.matchAll(/^line (\d+): refused: (.*)$/gm)].map((m) => [
      Number(m[1]),
      m[2],
    ]);
    expect(reported.map(([line]) => line)).toEqual([10, 100, 200, 500, 999]);
    expect(String(reported[1]![1])).toMatch(/state: must not be empty/);
    expect(String(reported[2]![1])).toMatch(/unknown policy "no-such-policy"/);
    expect(String(reported[4]![1])).toMatch(/repeats line 6/);
    expect(first.stderr).toMatch(/^sent 995\/995 \(100%\)/m); // plain progress lines off a terminal
    const received = await drain(queue.QueueUrl!);
    expect(received).toHaveLength(995);
    expect(new Set(received).size).toBe(995);

    const again = await publish([file, "--queue-url", queue.QueueUrl!]);
    expect(again.stdout).toMatch(/0 sent, 995 already sent before, 5 refused/);
    expect(await drain(queue.QueueUrl!)).toHaveLength(0);
  });

  it("reads CSV, extra columns becoming metadata", async () => {
    const queue = await sqs.send(new CreateQueueCommand({ QueueName: "publish-csv" }));
    const file = join(dir, "items.csv");
    await writeFile(
      file,
      'id,policy,state,channel\nC-1,ticket-routing,"Charged twice, please refund",email\nC-2,ticket-routing,,chat\n',
    );
    const result = await publish([file, "--queue-url", queue.QueueUrl!]);
    expect(result.stdout).toMatch(/1 sent/);
    expect(result.stderr).toMatch(/line 3: refused: state: must not be empty/);
    const batch = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.QueueUrl!, MaxNumberOfMessages: 10 }),
    );
    expect(JSON.parse(batch.Messages![0]!.Body!)).toEqual({
      id: "C-1",
      policy: "ticket-routing",
      state: "Charged twice, please refund",
      metadata: { channel: "email" },
    });
  });

  it("publishes Decision Requested events that the intake rule accepts", async () => {
    const delivered: unknown[] = [];
    const bus: LocalEventBus = await startEventBus({
      name: "decisions",
      rules: [
        {
          name: "requested",
          pattern: RULES.requested.pattern,
          target: async (event) => void delivered.push(event.detail),
        },
      ],
    });
    try {
      const file = join(dir, "events.jsonl");
      await writeFile(
        file,
        `${JSON.stringify({ id: "E-1", policy: "pre-screen", state: { income: "1" } })}\n`,
      );
      const result = await publish([file, "--event-bus", "decisions"], {
        AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
      });
      expect(result.code).toBe(0);
      await bus.idle();
      expect(delivered).toEqual([{ id: "E-1", policy: "pre-screen", state: { income: "1" } }]);
      // A bus that does not exist is refused, as AWS refuses it, in one line and without retries.
      const typo = await publish(
        [file, "--event-bus", "nosuchbus", "--resume-file", join(dir, "typo.sent")],
        {
          AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
        },
      );
      expect(typo.code).toBe(1);
      expect(typo.stderr).toMatch(
        /^decide publish: event bus "nosuchbus" does not exist: check --event-bus/m,
      );
      expect(typo.stderr).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(typo.stdout).not.toMatch(/1 sent/);
      expect(bus.events).toHaveLength(1);
    } finally {
      await bus.stop();
    }
  });

  it("sends the rest of a CSV with a byte-order mark, CRLF and an unclosed quote, listing the bad line, no stack", async () => {
    const queue = await sqs.send(new CreateQueueCommand({ QueueName: "publish-excel" }));
    const file = join(dir, "excel.csv");
    // What Excel's "CSV UTF-8" writes (a byte-order mark, CRLF), with one quote left open by hand.
    const rows = [
      "id,policy,state,channel",
      'NC-C1,ticket-routing,"Charged twice, please refund",web',
      "NC-C2,ticket-routing",
      'NC-C5,ticket-routing,"unterminated quote,web',
      "NC-C6,ticket-routing,app crashes,web",
      "NC-C7,ticket-routing,42,web",
    ];
    await writeFile(
      file,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${rows.join("\r\n")}\r\n`)]),
    );
    const result = await publish([file, "--queue-url", queue.QueueUrl!]);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(/CsvError|at .*\.(ts|js):\d+/);
    const refused = [...result.stderr.matchAll(/^line (\d+): refused: (.*)$/gm)].map(
      (m) => `${m[1]}: ${m[2]}`,
    );
    expect(refused).toEqual([
      "3: state: is missing: the row has 2 fields, the header 4 (id, policy, state, channel)",
      "4: CSV: a quoted field is not closed by the end of the file",
    ]);
    expect(result.stdout).toMatch(/3 sent, 0 already sent before, 2 refused lines not sent/);
    expect((await drain(queue.QueueUrl!)).sort()).toEqual(["NC-C1", "NC-C6", "NC-C7"]);
  });

  it("refuses invalid UTF-8 and an over-long line by number, and the JSON line after a byte-order mark is read", async () => {
    const queue = await sqs.send(new CreateQueueCommand({ QueueName: "publish-bytes" }));
    const file = join(dir, "bytes.jsonl");
    const line = (id: string, state: string) => JSON.stringify({ id, policy: "ticket-routing", state });
    await writeFile(
      file,
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(`${line("U-1", "fine")}\n${line("U-2", "caf")}`),
        Buffer.from([0xe9]), // Latin-1 é: not UTF-8
        Buffer.from(`\n${line("U-3", "x".repeat(300_000))}\n${line("U-4", "also fine")}\n`),
      ]),
    );
    const result = await publish([file, "--queue-url", queue.QueueUrl!]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^line 2: refused: is not valid UTF-8 \(at byte \d+ of the line\)/m);
    expect(result.stderr).toMatch(
      /^line 3: refused: is 300\d{3} bytes, over the limit of 262144 bytes per line$/m,
    );
    expect((await drain(queue.QueueUrl!)).sort()).toEqual(["U-1", "U-4"]);
  });

  it("sends to the INTAKE_QUEUE_URL that npm start exports when no target flag is given", async () => {
    const queue = await sqs.send(new CreateQueueCommand({ QueueName: "publish-exported" }));
    const file = join(dir, "exported.jsonl");
    await writeFile(file, `${JSON.stringify({ id: "X-1", policy: "ticket-routing", state: "hi" })}\n`);
    const result = await publish([file], { INTAKE_QUEUE_URL: queue.QueueUrl! });
    expect(result.code, result.stderr).toBe(0);
    expect(await drain(queue.QueueUrl!)).toEqual(["X-1"]);
  });

  it("explains usage mistakes in one line and where to read more", async () => {
    const none = await publish([join(dir, "items.jsonl")], { INTAKE_QUEUE_URL: "" });
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      "decide publish: INTAKE_QUEUE_URL is not set and --queue-url (or --event-bus NAME) is not given: " +
        "is npm start running? source the env file it wrote (source .cache/local/env) or pass --local-env FILE\nsee: npx decide publish --help\n",
    );
    const typo = await publish([join(dir, "items.jsonl"), "--queue", "x"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      "decide publish: unknown flag --queue; did you mean --queue-url?\nsee: npx decide publish --help\n",
    );
  });
});

/**
 * The env file `npm start` writes instead of printing 15 `export` lines (one of them, the
 * dead-letter routes, 1,166 characters of JSON): a shell can source it, and every `decide` command
 * reads it with `--local-env`, getting back exactly the values written, quotes and all. A variable
 * the environment already sets wins; the bus's log keeps a bounded number of recent events.
 */

import { spawnSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../cli/args.ts";
import { applyEnvFile, envFileText, parseEnvFile, takeEnvFileFlag } from "../../cli/env-file.ts";
import type { BusEvent } from "../../infra/local/event-bus.ts";
import { EventLog } from "../../infra/local/event-log.ts";

const ROUTES = JSON.stringify({
  intake: { dlqUrl: "http://127.0.0.1:9324/1/intake-dlq", queueUrl: "http://127.0.0.1:9324/1/intake" },
  note: 'it\'s quoted: $HOME `x` "y"',
});

describe("the env file", () => {
  it("reads back what it wrote, and a shell that sources it gets the same values", async () => {
    const variables = { DECISIONS_TABLE: "decisions", DEAD_LETTER_ROUTES: ROUTES, EMPTY: "" };
    const text = envFileText(variables, "written by a test");
    expect(text.split("\n").filter((l) => l.startsWith("export "))).toHaveLength(3);
    expect(parseEnvFile(text, "env")).toEqual(variables);
    const dir = await mkdtemp(join(tmpdir(), "env-file-"));
    await writeFile(join(dir, "env"), text);
    const shell = spawnSync(
      "bash",
      ["-c", `source '${join(dir, "env")}' && printf %s "$DEAD_LETTER_ROUTES"`],
      {
        encoding: "utf8",
      },
    );
    expect(shell.stdout).toBe(ROUTES);
  });

  it("takes bare and double-quoted values and names a line of another shape", () => {
    expect(parseEnvFile('# note\n\nA=1\nexport B="two words"\n', "f")).toEqual({ A: "1", B: "two words" });
    expect(() => parseEnvFile("A=1\nnot a variable\n", "f")).toThrow(/f: line 2 is not NAME=value/);
    expect(() => parseEnvFile("A='open\n", "f")).toThrow(UsageError);
  });

  it("fills only what the environment leaves unset or empty", async () => {
    const dir = await mkdtemp(join(tmpdir(), "env-file-"));
    const file = join(dir, "env");
    await writeFile(file, envFileText({ A: "from file", B: "from file", C: "from file" }, "t"));
    const env: NodeJS.ProcessEnv = { A: "set", B: "" };
    expect(applyEnvFile(file, env)).toBe(2);
    expect(env).toEqual({ A: "set", B: "from file", C: "from file" });
    expect(() => applyEnvFile(join(dir, "none"), {})).toThrow(
      "no such file (npm start writes it as it starts: is it running?)",
    );
  });

  it("is named by --local-env anywhere among the arguments", () => {
    expect(takeEnvFileFlag(["status", "--local-env", "f", "--since", "2026-01-01"])).toEqual({
      argv: ["status", "--since", "2026-01-01"],
      envFile: "f",
    });
    expect(takeEnvFileFlag(["status", "--local-env=f"])).toEqual({ argv: ["status"], envFile: "f" });
    expect(takeEnvFileFlag(["status"])).toEqual({ argv: ["status"] });
    expect(() => takeEnvFileFlag(["status", "--local-env"])).toThrow("needs a file");
  });
});

describe("the local bus's event log", () => {
  const event = (n: number) => ({ id: `e${n}` }) as unknown as BusEvent;

  it("keeps the last events it may hold and says how many a late reader missed", () => {
    const log = new EventLog<BusEvent>(3);
    for (let n = 1; n <= 10; n++) log.append(event(n));
    expect(log.events().map((e) => e.id)).toEqual(["e8", "e9", "e10"]);
    const late = log.after(2, 100);
    expect(late.events.map((e) => e.seq)).toEqual([8, 9, 10]);
    expect(late.missed).toBe(5);
    expect(late.last).toBe(10);
    expect(log.after(9, 100)).toEqual({ events: [{ seq: 10, event: event(10) }], missed: 0, last: 10 });
    expect(log.after(10, 100).events).toEqual([]);
    expect(log.after(7, 1).events.map((e) => e.seq)).toEqual([8]);
  });

  it("holds at most a quarter more than its capacity between drops, however many pass", () => {
    const log = new EventLog<BusEvent>(100);
    for (let n = 1; n <= 10_000; n++) log.append(event(n));
    expect(log.events()).toHaveLength(100);
    expect(log.after(0, 1_000).events).toHaveLength(100);
  });
});

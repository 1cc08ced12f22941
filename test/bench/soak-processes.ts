/**
 * The processes the soak runs and breaks: the decision endpoint (`decide serve`), the local mode
 * (`decide local --endpoint-url`, in a process group of its own so that a Ctrl-C reaches it and
 * its DynamoDB Local together), and CPU hogs; with the faults the soak rotates through and the
 * resident memory of each, read from /proc.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DECIDE } from "../helpers/decide-cli.ts";
import { REPO_ROOT } from "../helpers/models.ts";

/** A child that can be killed and started again, its output kept (the last 20,000 characters). */
export interface Service {
  readonly name: string;
  child: ChildProcess;
  output: string;
  start(): void;
}

/** A `decide` command as a restartable service. */
export function decideService(name: string, args: readonly string[]): Service {
  const service: Service = {
    name,
    child: undefined as unknown as ChildProcess,
    output: "",
    start() {
      const child = spawn(process.execPath, [DECIDE, ...args], {
        cwd: REPO_ROOT,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const keep = (chunk: Buffer) => {
        service.output = (service.output + chunk.toString()).slice(-20_000);
      };
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
      service.child = child;
    },
  };
  service.start();
  return service;
}

/** Resolves once `child` has exited (at once if it has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident memory of `pid` in MiB, from /proc (undefined when it is gone). */
export function rssMiB(pid: number | undefined): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kib === undefined ? undefined : Math.round(Number(kib) / 1024);
  } catch {
    return undefined;
  }
}

/** The pid of the DynamoDB Local the local mode on `dataDir` runs (its pid file). */
export function dynamoPid(dataDir: string): number | undefined {
  try {
    return Number(readFileSync(join(dataDir, "dynamodb", "dynamodb-local.pid"), "utf8").trim());
  } catch {
    return undefined;
  }
}

/** The faults the soak rotates through. */
export const FAULTS = ["endpoint-killed", "dynamodb-paused", "local-mode-killed", "cpu-hog"] as const;
export type Fault = (typeof FAULTS)[number];

/** What the faults act on. */
export interface FaultTargets {
  readonly endpoint: Service;
  readonly local: Service;
  readonly dataDir: string;
  /** Waits until the endpoint answers /ping, and until the local mode's queues answer. */
  readonly endpointReady: () => Promise<void>;
  readonly localReady: () => Promise<void>;
  readonly say: (line: string) => void;
}

/** Injects `fault` and undoes it (each lasts `seconds`); resolves once the pipeline runs again. */
export async function inject(fault: Fault, targets: FaultTargets, seconds: number): Promise<void> {
  const { endpoint, local, say } = targets;
  if (fault === "endpoint-killed") {
    endpoint.child.kill("SIGKILL");
    await exited(endpoint.child);
    await sleep(seconds * 1000);
    endpoint.start();
    await targets.endpointReady();
  } else if (fault === "dynamodb-paused") {
    const pid = dynamoPid(targets.dataDir);
    if (pid === undefined) return say("no DynamoDB Local pid file: nothing paused");
    process.kill(pid, "SIGSTOP");
    await sleep(seconds * 1000);
    process.kill(pid, "SIGCONT");
  } else if (fault === "local-mode-killed") {
    // Node alone, as `kill -9 <pid>` does: its DynamoDB Local lives on and the next start stops it.
    local.child.kill("SIGKILL");
    await exited(local.child);
    local.start();
    await targets.localReady();
  } else {
    const hogs = [0, 1].map(() =>
      spawn(process.execPath, ["-e", "for (const end = Date.now() + 1e9; Date.now() < end; );"], {
        stdio: "ignore",
      }),
    );
    await sleep(seconds * 1000);
    for (const hog of hogs) hog.kill("SIGKILL");
  }
}

/**
 * Runs a command with a CPU hog beside it: one busy loop per core (worker threads), each bounded
 * in time so that it stops by itself, and all stopped as soon as the command ends. Proves that a
 * suite holds on a loaded machine.
 *
 *   npm run test:faults:loaded
 *   node --import tsx test/bench/with-cpu-hog.ts [--seconds 1800] [--workers N] -- COMMAND ARGS...
 */
import { spawn } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";

const separator = process.argv.indexOf("--");
if (separator < 0 || separator === process.argv.length - 1) {
  console.error("usage: with-cpu-hog.ts [--seconds N] [--workers N] -- COMMAND ARGS...");
  process.exit(2);
}
const { values } = parseArgs({
  args: process.argv.slice(2, separator),
  options: { seconds: { type: "string", default: "1800" }, workers: { type: "string" } },
});
const seconds = Number(values.seconds);
const workers = Number(values.workers ?? availableParallelism());
if (!(seconds > 0) || !(workers > 0)) {
  console.error("--seconds and --workers must be positive numbers");
  process.exit(2);
}

// Each worker spins until its own deadline, checking it every few million iterations.
const hogSource = `
  const { workerData } = require("node:worker_threads");
  const until = Date.now() + workerData.seconds * 1000;
  let x = 0;
  while (Date.now() < until) { for (let i = 0; i < 5e6; i++) x = (x * 1103515245 + 12345) >>> 0; }
`;
const hogs = Array.from(
  { length: workers },
  () => new Worker(hogSource, { eval: true, workerData: { seconds } }),
);
const started = performance.now();
console.log(
  `cpu hog: ${workers} busy loops for at most ${seconds} s (load average before: ${loadavg()[0]!.toFixed(2)})`,
);

const [command, ...args] = process.argv.slice(separator + 1);
const child = spawn(command!, args, { stdio: "inherit" });
const sampler = setInterval(() => console.log(`cpu hog: load average ${loadavg()[0]!.toFixed(2)}`), 30_000);
child.on("exit", async (code, signal) => {
  clearInterval(sampler);
  await Promise.all(hogs.map((hog) => hog.terminate()));
  console.log(
    `cpu hog: the command ended (${signal ?? `exit ${code}`}) after ${((performance.now() - started) / 1000).toFixed(1)} s beside ${workers} busy loops`,
  );
  process.exit(code ?? 1);
});

/**
 * `npm run bench:gpu`: per-item decision times on an NVIDIA GPU, beside the CPU's, for the
 * capacity model's GPU instance types (the async lane makes a GPU affordable: it scales to zero).
 *
 * On a machine where `nvidia-smi` names a GPU, it installs node-llama-cpp's prebuilt CUDA binaries
 * from the npm registry at the version of the installed node-llama-cpp (`npm install --no-save
 * @node-llama-cpp/linux-x64-cuda@V @node-llama-cpp/linux-x64-cuda-ext@V`; nothing is compiled),
 * then, in a fresh process each, measures the generated Qwen2-0.5B and Qwen2-1.5B shapes (Q8_0,
 * never committed: `.cache/bench-models/`) on the GPU and on the CPU: the median seconds of a fresh
 * ~200-token decision and of an item under a cached ~300-token policy preamble (as `npm run
 * bench:cost` measures them). The 0.5B GPU figures go to `infra/capacity/gpu-times.json` under the
 * GPU's name, where the capacity model reads them for instance types carrying that GPU. Without a
 * GPU it measures the CPU path only (the 0.5B shape, fewer items), says so, and leaves the GPU
 * rows unmeasured (the file untouched). A few minutes on a GPU machine.
 *
 * Flags: --items N (default 20; 5 without a GPU), --shapes qwen2-0.5b,qwen2-1.5b, --dry-run (write nothing).
 * Internal: --measure SHAPE --gpu cuda|off (one measurement, one JSON line).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { isModelShapeName, type ModelShapeName } from "../../endpoint/models/shapes.ts";
import { GPU_TIMES, GPU_TIMES_PATH, type GpuTimesFile } from "../../infra/capacity/async-times.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { machineLine } from "./bench-helpers.ts";

const { values: flags } = parseArgs({
  options: {
    items: { type: "string" },
    shapes: { type: "string" },
    "dry-run": { type: "boolean", default: false },
    measure: { type: "string" },
    gpu: { type: "string", default: "off" },
  },
});

/** One measurement: seconds per fresh item and per item under a cached preamble. */
interface Measured {
  readonly shape: string;
  readonly gpu: string;
  readonly fresh: number;
  readonly preambleCached: number;
}

/** Measures one shape in this process (the CUDA binaries, if any, were installed before it started). */
async function measureHere(shape: ModelShapeName, gpu: "cuda" | "off", items: number): Promise<Measured> {
  const { DecisionModel } = await import("../../endpoint/runtime/decision-model.ts");
  const { DecisionScorer } = await import("../../endpoint/scorer/scorer.ts");
  const { decisionRequest } = await import("../helpers/decision-requests.ts");
  const { benchModelPath, median, timed, words } = await import("./bench-helpers.ts");
  const model = await DecisionModel.load({ modelPath: await benchModelPath(shape), gpu, hash: false });
  const scorer = await DecisionScorer.create(model, { contextSize: 4096, prefixSlots: 1 });
  const question = (instructionWords: number) => ({
    key: "team",
    type: "choice" as const,
    instructions: `Which team should handle this ticket? ${words(instructionWords, 5)}`,
    options: [
      { id: "billing", description: "Billing: charges, invoices, refunds" },
      { id: "technical", description: "Technical: errors, crashes, bugs" },
      { id: "account", description: "Account: login, password, profile" },
      { id: "none", description: "None of these" },
    ],
  });
  try {
    await scorer.score(decisionRequest({ state: words(150, 1), questions: [question(40)] }), {
      reuse: false,
    });
    const fresh: number[] = [];
    for (let i = 0; i < 5; i++)
      fresh.push(
        await timed(() =>
          scorer.score(decisionRequest({ state: words(150, i + 2), questions: [question(40)] }), {
            reuse: false,
          }),
        ),
      );
    const layout = "policy-first" as const;
    await scorer.score(decisionRequest({ state: words(30, 99), questions: [question(260)], layout }), {
      reuse: false,
    });
    const cached: number[] = [];
    for (let i = 0; i < items; i++)
      cached.push(
        await timed(() =>
          scorer.score(decisionRequest({ state: words(30, i * 3), questions: [question(260)], layout })),
        ),
      );
    return {
      shape,
      gpu: String(model.gpu || "cpu"),
      fresh: median(fresh) / 1000,
      preambleCached: median(cached) / 1000,
    };
  } finally {
    await scorer.dispose();
    await model.dispose();
  }
}

/** The GPU's name from nvidia-smi, or undefined without one. */
function gpuName(): string | undefined {
  const smi = spawnSync("nvidia-smi", ["--query-gpu=name", "--format=csv,noheader"], { encoding: "utf8" });
  return smi.status === 0 ? smi.stdout.split("\n")[0]?.trim() || undefined : undefined;
}

/** Installs node-llama-cpp's CUDA binaries at its own version (from the npm registry; no build). */
function installCuda(): void {
  const version = (
    JSON.parse(readFileSync(join(REPO_ROOT, "node_modules/node-llama-cpp/package.json"), "utf8")) as {
      version: string;
    }
  ).version;
  const packages = [
    `@node-llama-cpp/linux-x64-cuda@${version}`,
    `@node-llama-cpp/linux-x64-cuda-ext@${version}`,
  ];
  console.log(`installing ${packages.join(" ")} (--no-save)`);
  const npm = spawnSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", ...packages], {
    cwd: REPO_ROOT,
    stdio: "inherit",
  });
  if (npm.status !== 0) throw new Error(`npm install of the CUDA binaries failed (exit ${npm.status})`);
}

/** Runs one measurement in a fresh process (so it loads the binaries installed since this one started). */
function measureInChild(shape: string, gpu: "cuda" | "off", items: number): Measured {
  const child = spawnSync(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      "tsx",
      join(REPO_ROOT, "test/bench/gpu.bench.ts"),
      "--measure",
      shape,
      "--gpu",
      gpu,
      "--items",
      String(items),
    ],
    { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  const line = child.stdout.trim().split("\n").at(-1) ?? "";
  if (child.status !== 0 || !line.startsWith("{"))
    throw new Error(`measuring ${shape} on ${gpu} failed: ${child.stdout}`);
  return JSON.parse(line) as Measured;
}

if (flags.measure) {
  if (!isModelShapeName(flags.measure)) throw new Error(`unknown shape ${flags.measure}`);
  const result = await measureHere(
    flags.measure,
    flags.gpu === "cuda" ? "cuda" : "off",
    Number(flags.items ?? 20),
  );
  console.log(JSON.stringify(result));
} else {
  const gpu = gpuName();
  const items = Number(flags.items ?? (gpu ? 20 : 5));
  const shapes = (flags.shapes ?? (gpu ? "qwen2-0.5b,qwen2-1.5b" : "qwen2-0.5b")).split(",");
  console.log(`\n# GPU benchmark: ${gpu ?? "no NVIDIA GPU found (nvidia-smi): the CPU path only"}`);
  console.log(machineLine());
  if (gpu) installCuda();
  const rows: Measured[] = [];
  for (const shape of shapes) {
    rows.push(measureInChild(shape, "off", items));
    if (gpu) rows.push(measureInChild(shape, "cuda", items));
  }
  console.log("\n| shape | device | s per fresh item | s per item, preamble cached |");
  console.log("|---|---|---|---|");
  for (const r of rows)
    console.log(`| ${r.shape} | ${r.gpu} | ${r.fresh.toFixed(4)} | ${r.preambleCached.toFixed(4)} |`);
  const measured = rows.find((r) => r.shape === "qwen2-0.5b" && r.gpu !== "cpu" && r.gpu !== "false");
  if (!gpu || !measured) {
    console.log(
      `\nGPU rows: unmeasured (${gpu ? "the CUDA binary did not load" : "no GPU here"}); ${GPU_TIMES_PATH} left as it is`,
    );
  } else if (!flags["dry-run"]) {
    const file: GpuTimesFile = {
      source: GPU_TIMES.source.startsWith("not measured") ? "npm run bench:gpu" : GPU_TIMES.source,
      gpus: {
        ...GPU_TIMES.gpus,
        [gpu]: {
          source: `npm run bench:gpu on ${new Date().toISOString().slice(0, 10)}: ${gpu}, generated qwen2-0.5b Q8_0, median of ${items}`,
          secondsPerItem: { fresh: measured.fresh, preambleCached: measured.preambleCached },
        },
      },
    };
    writeFileSync(join(REPO_ROOT, GPU_TIMES_PATH), `${JSON.stringify(file, null, 2)}\n`);
    console.log(
      `\nwrote ${GPU_TIMES_PATH}: ${gpu} ${measured.fresh.toFixed(4)} s fresh, ${measured.preambleCached.toFixed(4)} s cached`,
    );
  }
}

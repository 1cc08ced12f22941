/**
 * Reads a soak's samples (`npm run soak -- --out FILE`) and says whether resident memory grows with
 * the work. Each process restarts with its own faults (the local mode with its SIGKILL, the endpoint
 * when it is killed), so memory is read stretch by stretch, between restarts:
 *
 * - the median of each third of a stretch (a plateau has the last two close);
 * - the slope over the stretch's last two thirds, in MiB per 1,000 items decided (a leak per item
 *   shows as a steady positive slope; the first third is warm-up: caches, JIT, pools);
 * - the plateau of each stretch against the items decided before it: a leak tied to the data kept
 *   (the table, the summary's counts) shows as later plateaus standing higher. Only stretches of
 *   at least five minutes count there: a shorter one is still warming up.
 *
 *   npm run soak:memory -- [test-output/soak.json]
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "../helpers/models.ts";

interface Sample {
  readonly t: number;
  readonly localMiB?: number;
  readonly endpointMiB?: number;
  readonly dynamoMiB?: number;
  readonly summary?: { readonly decided: number };
}

interface Soak {
  readonly command: string;
  readonly seconds: number;
  readonly faults: readonly { t: number; fault: string; seconds: number }[];
  readonly samples: readonly Sample[];
}

type Process = "localMiB" | "endpointMiB" | "dynamoMiB";

/** The faults that restart each process. */
const RESTARTS: Record<Process, string | undefined> = {
  localMiB: "local-mode-killed",
  endpointMiB: "endpoint-killed",
  dynamoMiB: undefined,
};

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** Least-squares slope of y on x. */
function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? Number.NaN : sxy / sxx;
}

/** One stretch of a process between restarts, as the report prints it. */
interface Stretch {
  readonly from: number;
  readonly to: number;
  readonly decidedBefore: number;
  readonly decidedIn: number;
  readonly thirds: readonly [number, number, number];
  readonly max: number;
  readonly miBPerThousandItems: number;
}

/** Splits the samples of `process` at its restarts and reads each stretch of at least 6 samples. */
function stretches(soak: Soak, process: Process): Stretch[] {
  const restarts = soak.faults.filter((f) => f.fault === RESTARTS[process]).map((f) => f.t);
  const bounds = [0, ...restarts, Number.POSITIVE_INFINITY];
  const out: Stretch[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    // Samples after the restart's own fault window, up to the next restart.
    const inside = soak.samples.filter(
      (s) => s.t > bounds[i]! + 30 && s.t < bounds[i + 1]! && s[process] !== undefined && s.summary,
    );
    if (inside.length < 6) continue;
    const mib = inside.map((s) => s[process]!);
    const third = Math.floor(inside.length / 3);
    const thirds: [number, number, number] = [
      median(mib.slice(0, third)),
      median(mib.slice(third, 2 * third)),
      median(mib.slice(2 * third)),
    ];
    const tail = inside.slice(third).map((s) => [s.summary!.decided / 1000, s[process]!] as const);
    out.push({
      from: inside[0]!.t,
      to: inside.at(-1)!.t,
      decidedBefore: inside[0]!.summary!.decided,
      decidedIn: inside.at(-1)!.summary!.decided - inside[0]!.summary!.decided,
      thirds,
      max: Math.max(...mib),
      miBPerThousandItems: slope(tail),
    });
  }
  return out;
}

function report(soak: Soak, process: Process): string[] {
  const found = stretches(soak, process);
  const lines = [`${process.replace("MiB", "")}: ${found.length} stretches`];
  for (const s of found)
    lines.push(
      `  ${s.from}-${s.to} s, ${s.decidedIn} items decided after ${s.decidedBefore}: thirds ${s.thirds.join(", ")} MiB, max ${s.max}, ${s.miBPerThousandItems.toFixed(2)} MiB per 1,000 items over the last two thirds`,
    );
  const long = found.filter((s) => s.to - s.from >= 300);
  if (long.length >= 3) {
    const plateau = long.map((s) => [s.decidedBefore / 1000, s.thirds[2]] as const);
    lines.push(
      `  last-third medians of the ${long.length} stretches of 5 min or more against items decided before: ${slope(plateau).toFixed(2)} MiB per 1,000 items`,
    );
  }
  return lines;
}

const file = process.argv[2] ?? join(REPO_ROOT, "test-output", "soak.json");
const soak = JSON.parse(await readFile(file, "utf8")) as Soak;
console.log(
  `${soak.command}: ${soak.seconds} s, ${soak.samples.length} samples, ${soak.faults.length} faults`,
);
for (const process of ["localMiB", "endpointMiB", "dynamoMiB"] as const)
  console.log(report(soak, process).join("\n"));

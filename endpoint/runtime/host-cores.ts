/**
 * How many evaluation threads fit the host: the CPUs this process may run on (affinity), capped
 * by its cgroup CPU quota (a container limited to 2 CPUs on a 64-core host), and counted in
 * physical cores (llama.cpp gains nothing from a second hyper-thread of a busy core, and on a
 * shared machine one thread per physical core degrades least). Pure over a file reader, so the
 * unit tests can give it any /sys and /proc.
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/** The default thread count and how it was reached (printed by the benchmarks and /healthz). */
export interface HostThreads {
  readonly threads: number;
  readonly reason: string;
}

type ReadText = (path: string) => string | undefined;

const readText: ReadText = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** The cgroup CPU quota in CPUs (v2 `cpu.max`, else v1 `cfs_quota_us`/`cfs_period_us`), if any. */
export function cgroupCpuLimit(read: ReadText = readText): number | undefined {
  const v2 = read("/sys/fs/cgroup/cpu.max")?.trim().split(/\s+/);
  if (v2 && v2[0] !== "max") {
    const quota = Number(v2[0]);
    const period = Number(v2[1] ?? 100_000);
    if (quota > 0 && period > 0) return quota / period;
  }
  const quota = Number(read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")?.trim());
  const period = Number(read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")?.trim());
  if (quota > 0 && period > 0) return quota / period;
  return undefined;
}

/** Hardware threads per physical core, from /proc/cpuinfo (`siblings` / `cpu cores`); 1 when unknown. */
export function threadsPerCore(read: ReadText = readText): number {
  const info = read("/proc/cpuinfo") ?? "";
  const siblings = Number(/^siblings\s*:\s*(\d+)/m.exec(info)?.[1]);
  const cores = Number(/^cpu cores\s*:\s*(\d+)/m.exec(info)?.[1]);
  return siblings > 0 && cores > 0 && siblings >= cores ? Math.round(siblings / cores) : 1;
}

/** The default evaluation threads for this process. */
export function hostThreads(read: ReadText = readText, usable: number = availableParallelism()): HostThreads {
  const perCore = threadsPerCore(read);
  const physical = Math.max(1, Math.floor(usable / perCore));
  const quota = cgroupCpuLimit(read);
  if (quota !== undefined && quota < physical)
    return {
      threads: Math.max(1, Math.floor(quota)),
      reason: `cgroup CPU quota ${quota} of ${usable} usable CPUs`,
    };
  const smt = perCore > 1 ? `, ${perCore} hardware threads per core` : "";
  return { threads: physical, reason: `${physical} physical cores of ${usable} usable CPUs${smt}` };
}

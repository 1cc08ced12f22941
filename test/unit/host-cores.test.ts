/**
 * Default threads from what the process may really use: affinity, cgroup quota (v2 and v1) and
 * hardware threads per core, over made-up /sys and /proc files.
 */
import { describe, expect, it } from "vitest";
import { cgroupCpuLimit, hostThreads, threadsPerCore } from "../../endpoint/runtime/host-cores.ts";

const files =
  (entries: Record<string, string>) =>
  (path: string): string | undefined =>
    entries[path];
const smt = "processor\t: 0\nsiblings\t: 16\ncpu cores\t: 8\n";

describe("host threads", () => {
  it("reads a cgroup v2 quota, a v1 quota, and no quota", () => {
    expect(cgroupCpuLimit(files({ "/sys/fs/cgroup/cpu.max": "200000 100000\n" }))).toBe(2);
    expect(cgroupCpuLimit(files({ "/sys/fs/cgroup/cpu.max": "max 100000\n" }))).toBeUndefined();
    expect(
      cgroupCpuLimit(
        files({
          "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "150000",
          "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000",
        }),
      ),
    ).toBe(1.5);
    expect(cgroupCpuLimit(files({ "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1" }))).toBeUndefined();
  });

  it("counts physical cores, and lets a smaller quota win", () => {
    expect(threadsPerCore(files({ "/proc/cpuinfo": smt }))).toBe(2);
    expect(hostThreads(files({ "/proc/cpuinfo": smt }), 16)).toMatchObject({ threads: 8 });
    expect(
      hostThreads(files({ "/proc/cpuinfo": smt, "/sys/fs/cgroup/cpu.max": "300000 100000" }), 16),
    ).toEqual({
      threads: 3,
      reason: "cgroup CPU quota 3 of 16 usable CPUs",
    });
    // Affinity to 4 CPUs of an SMT machine: 2 physical cores.
    expect(hostThreads(files({ "/proc/cpuinfo": smt }), 4).threads).toBe(2);
    expect(hostThreads(files({}), 1).threads).toBe(1);
  });
});

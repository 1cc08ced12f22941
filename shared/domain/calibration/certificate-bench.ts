/**
 * What the certificate's 95% means in practice, beside it: how often the bench's generated label
 * sets got a certificate at the same target, and how often a certificate they got was wrong (its
 * threshold's true rate above the target). The 95% is over all label sets, certified or not; among
 * the certified ones the wrong share is higher. The figures are the bench's table (`npm run
 * bench:certificate`, docs/benchmarks.md, "Certified auto threshold"), not a simulation of this
 * run: that would need the model's true error curve, which nobody has. Pure.
 */
import type { CertificateResult } from "./certificate.ts";

/** One row of the bench: a target and a label count, 1,000 generated sets. */
interface BenchRow {
  readonly maxError: number;
  readonly labels: number;
  /** Share of sets that got a certificate. */
  readonly certified: number;
  /** Share of those certificates whose threshold's true rate was above the target. */
  readonly wrongWhenCertified: number | null;
}

/** The bench's run of 2026-12-01 at 95% confidence (docs/benchmarks.md quotes the same table). */
const BENCH: readonly BenchRow[] = [
  { maxError: 0.01, labels: 500, certified: 0, wrongWhenCertified: null },
  { maxError: 0.01, labels: 1500, certified: 0.741, wrongWhenCertified: 0.018 },
  { maxError: 0.01, labels: 5000, certified: 0.986, wrongWhenCertified: 0.027 },
  { maxError: 0.02, labels: 500, certified: 0.603, wrongWhenCertified: 0.017 },
  { maxError: 0.02, labels: 1500, certified: 0.982, wrongWhenCertified: 0.033 },
  { maxError: 0.02, labels: 5000, certified: 1, wrongWhenCertified: 0.044 },
  { maxError: 0.05, labels: 500, certified: 0.982, wrongWhenCertified: 0.035 },
  { maxError: 0.05, labels: 1500, certified: 1, wrongWhenCertified: 0.038 },
  { maxError: 0.05, labels: 5000, certified: 1, wrongWhenCertified: 0.021 },
];

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/**
 * The bench's row nearest a certificate (same target and confidence 95%, the label count nearest
 * on a log scale), or undefined when the bench has none for its target or it certified nothing.
 */
function nearestRow(c: Pick<CertificateResult, "maxError" | "confidence" | "labels">): BenchRow | undefined {
  if (c.confidence !== 0.95) return undefined;
  const rows = BENCH.filter((r) => Math.abs(r.maxError - c.maxError) < 1e-9 && r.wrongWhenCertified !== null);
  const distance = (r: BenchRow) => Math.abs(Math.log(r.labels) - Math.log(Math.max(1, c.labels)));
  return [...rows].sort((a, b) => distance(a) - distance(b))[0];
}

/**
 * "bench (...): certified in 98.2% of generated sets, wrong in 3.3% of those certified", for a
 * certificate that was given; undefined when none was, or the bench has no row for its target.
 */
export function benchText(
  c: Pick<CertificateResult, "maxError" | "confidence" | "labels" | "threshold">,
): string | undefined {
  const row = c.threshold === null ? undefined : nearestRow(c);
  if (!row) return undefined;
  return `beside the 95%: the bench's generated sets at ${pct(row.maxError)} with ${row.labels.toLocaleString("en-US")} labels got a certificate ${pct(row.certified)} of the time, and ${pct(row.wrongWhenCertified!)} of those certificates were wrong (npm run bench:certificate, docs/benchmarks.md; figures from its table, not from these labels)`;
}

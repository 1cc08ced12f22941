/**
 * What the certificate's 95% means in practice, beside it: how often the bench's generated label
 * sets got a certificate at the same target, and how often a certificate they got was wrong (its
 * threshold's true rate above the target). The 95% is over all label sets, certified or not; among
 * the certified ones the wrong share is higher. The figures are the bench's table (`npm run
 * bench:certificate`, docs/benchmarks.md, "Certified auto threshold"), not a simulation of this
 * run: that would need the model's true error curve, which nobody has. Pure.
 */
import type { CertificateResult } from "../domain/calibration/certificate/certificate.ts";

/** One row of the bench: a target and a label count, 1,000 generated sets. */
interface BenchRow {
  readonly maxError: number;
  readonly labels: number;
  /** Share of sets that got a certificate. */
  readonly certified: number;
  /** Share of those certificates whose threshold's true rate was above the target. */
  readonly wrongWhenCertified: number | null;
  /** The median automated units the row's certificates rested on (null: none certified). */
  readonly units: number | null;
}

/** The bench's run of 2026-12-01 at 95% confidence, units of 2026-12-05 (docs/benchmarks.md quotes the same table). */
const BENCH: readonly BenchRow[] = [
  { maxError: 0.01, labels: 500, certified: 0, wrongWhenCertified: null, units: null },
  { maxError: 0.01, labels: 1500, certified: 0.741, wrongWhenCertified: 0.018, units: 403 },
  { maxError: 0.01, labels: 5000, certified: 0.986, wrongWhenCertified: 0.027, units: 1782 },
  { maxError: 0.02, labels: 500, certified: 0.603, wrongWhenCertified: 0.017, units: 182 },
  { maxError: 0.02, labels: 1500, certified: 0.982, wrongWhenCertified: 0.033, units: 637 },
  { maxError: 0.02, labels: 5000, certified: 1, wrongWhenCertified: 0.044, units: 2472 },
  { maxError: 0.05, labels: 500, certified: 0.982, wrongWhenCertified: 0.035, units: 299 },
  { maxError: 0.05, labels: 1500, certified: 1, wrongWhenCertified: 0.038, units: 1006 },
  { maxError: 0.05, labels: 5000, certified: 1, wrongWhenCertified: 0.021, units: 3510 },
];

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** What the bench line is matched on: a certificate's target, and the units it rests on. */
type Matched = Pick<CertificateResult, "maxError" | "confidence" | "labels" | "threshold"> & {
  /** The automated units it rests on; without them, its label count is matched instead. */
  readonly automated?: number;
};

/**
 * The bench's row nearest a certificate (same target and confidence 95%, the median units its
 * certificates rested on nearest the certificate's own automated units on a log scale; its label
 * count where those are not given), or undefined when the bench has none for its target or it
 * certified nothing. Matching on the units, not the labels: a certificate on 150 units among 920
 * labels (mostly escalations) reads like the bench's 500-label sets, not its 1,500-label ones.
 */
function nearestRow(c: Matched): BenchRow | undefined {
  if (c.confidence !== 0.95) return undefined;
  const rows = BENCH.filter((r) => Math.abs(r.maxError - c.maxError) < 1e-9 && r.wrongWhenCertified !== null);
  const [own, theirs] =
    c.automated === undefined
      ? [c.labels, (r: BenchRow) => r.labels]
      : [c.automated, (r: BenchRow) => r.units ?? 1];
  const distance = (r: BenchRow) => Math.abs(Math.log(theirs(r)) - Math.log(Math.max(1, own)));
  return [...rows].sort((a, b) => distance(a) - distance(b))[0];
}

/**
 * "bench (...): certified in 98.2% of generated sets, wrong in 3.3% of those certified", for a
 * certificate that was given; undefined when none was, or the bench has no row for its target.
 */
export function benchText(c: Matched): string | undefined {
  const row = c.threshold === null ? undefined : nearestRow(c);
  if (!row) return undefined;
  const units =
    c.automated === undefined || row.units === null
      ? ""
      : ` (their certificates rested on a median of ${row.units.toLocaleString("en-US")} automated items, the nearest to this one's ${c.automated.toLocaleString("en-US")})`;
  return `beside the 95%: the bench's generated sets at ${pct(row.maxError)} with ${row.labels.toLocaleString("en-US")} labels${units} got a certificate ${pct(row.certified)} of the time, and ${pct(row.wrongWhenCertified!)} of those certificates were wrong (npm run bench:certificate, docs/benchmarks.md; figures from its table, not from these labels)`;
}

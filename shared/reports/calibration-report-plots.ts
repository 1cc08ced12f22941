/**
 * The calibration report's plots as inline SVG (no scripts, no network): the reliability diagram
 * and the risk–coverage curve, with the certificate's exact upper bound and its target when the
 * threshold was certified.
 */
import type { CalibrationSummary } from "../domain/calibration/calibrate.ts";
import type { ReliabilityBin } from "../domain/calibration/metrics.ts";
import { num, pct } from "./report-style.ts";

const SIZE = 320;
const PAD = 40;
const scale = (v: number) => PAD + v * (SIZE - 2 * PAD);
const flip = (v: number) => SIZE - scale(v);

/** Axes with ticks at quarters; `yTick` writes a y tick (the plain fraction by default). */
function axes(xLabel: string, yLabel: string, yTick: (t: number) => string = String): string {
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (t) =>
        `<text x="${scale(t)}" y="${SIZE - PAD + 16}" text-anchor="middle">${t}</text><text x="${PAD - 6}" y="${flip(t) + 4}" text-anchor="end">${yTick(t)}</text>`,
    )
    .join("");
  return `<line x1="${PAD}" y1="${SIZE - PAD}" x2="${SIZE - PAD}" y2="${SIZE - PAD}" stroke="#333"/>
<line x1="${PAD}" y1="${PAD}" x2="${PAD}" y2="${SIZE - PAD}" stroke="#333"/>${ticks}
<text x="${SIZE / 2}" y="${SIZE - 6}" text-anchor="middle">${xLabel}</text>
<text x="12" y="${SIZE / 2}" text-anchor="middle" transform="rotate(-90 12 ${SIZE / 2})">${yLabel}</text>`;
}

/** Reliability: accuracy per confidence bin, as the policy stands (grey) and proposed (blue). */
export function reliabilitySvg(current: ReliabilityBin[], calibrated: ReliabilityBin[]): string {
  const bars = (bins: ReliabilityBin[], color: string, offset: number, label: string) =>
    bins
      .filter((b) => b.count > 0)
      .map((b) => {
        const width = ((b.upper - b.lower) * (SIZE - 2 * PAD)) / 2 - 1;
        const x = scale(b.lower) + offset * (width + 1);
        return `<rect class="${label}" x="${x}" y="${flip(b.accuracy)}" width="${Math.max(1, width)}" height="${scale(b.accuracy) - PAD}" fill="${color}"><title>${label} ${num(b.lower, 2)}–${num(b.upper, 2)}: accuracy ${pct(b.accuracy)}, confidence ${pct(b.confidence)}, ${b.count} items</title></rect>`;
      })
      .join("");
  return `<svg id="reliability" role="img" aria-labelledby="rel-title rel-desc" viewBox="0 0 ${SIZE} ${SIZE}" width="${SIZE}" height="${SIZE}">
<title id="rel-title">Reliability diagram</title><desc id="rel-desc">Accuracy per confidence bin as the policy stands (grey) and proposed (blue); the diagonal is perfect calibration.</desc>
${axes("confidence (top probability)", "accuracy")}
<line x1="${scale(0)}" y1="${flip(0)}" x2="${scale(1)}" y2="${flip(1)}" stroke="#999" stroke-dasharray="4 4"/>
${bars(current, "#9e9e9e", 0, "current")}${bars(calibrated, "#1565c0", 1, "calibrated")}</svg>`;
}

const pathOf = (points: { coverage: number; y: number }[], maxRisk: number) =>
  points
    .map(
      (p, i) =>
        `${i ? "L" : "M"}${scale(p.coverage).toFixed(1)},${flip(Math.min(1, p.y / maxRisk)).toFixed(1)}`,
    )
    .join(" ");

/** The risk–coverage plot's legend: what each line is. */
function legend(certified: boolean): string {
  const entries: [string, string, string][] = [
    ["observed on the labels", "#1565c0", ""],
    ...(certified
      ? ([
          ["upper bound", "#1565c0", "5 3"],
          ["target", "#c62828", ""],
        ] as [string, string, string][])
      : []),
    ["chosen threshold", "#555", "3 3"],
  ];
  return `<g class="legend">${entries
    .map(
      ([label, color, dash], i) =>
        `<line x1="${PAD + 6}" y1="${PAD + 8 + i * 14}" x2="${PAD + 26}" y2="${PAD + 8 + i * 14}" stroke="${color}"${dash ? ` stroke-dasharray="${dash}"` : ""}/><text x="${PAD + 30}" y="${PAD + 12 + i * 14}">${label}</text>`,
    )
    .join("")}</g>`;
}

/**
 * Risk–coverage: the error rate of automated decisions against the share automated; certified,
 * the curve on the certificate's grid with its exact upper bound (dashed) and the target (red).
 */
export function riskCoverageSvg(summary: CalibrationSummary): string {
  const certificate = summary.certificate;
  const points = certificate
    ? certificate.curve.map((p) => ({ coverage: p.coverage, y: p.automated ? p.errors / p.automated : 0 }))
    : summary.riskCoverage.map((p) => ({ coverage: p.coverage, y: p.risk }));
  const bounds = certificate ? certificate.curve.map((p) => ({ coverage: p.coverage, y: p.bound })) : [];
  const maxRisk = Math.max(
    0.05,
    ...points.map((p) => p.y),
    ...(certificate ? [2 * certificate.maxError] : []),
  );
  const chosen = summary.threshold.coverage;
  const target = certificate
    ? `<line class="target" x1="${PAD}" y1="${flip(certificate.maxError / maxRisk)}" x2="${SIZE - PAD}" y2="${flip(certificate.maxError / maxRisk)}" stroke="#c62828"><title>target: ${pct(certificate.maxError)} wrong automatic actions</title></line>
<path class="bound" d="${pathOf(bounds, maxRisk)}" fill="none" stroke="#1565c0" stroke-dasharray="5 3"><title>${num(certificate.confidence * 100, 0)}% upper bound</title></path>`
    : "";
  return `<svg id="risk-coverage" role="img" aria-labelledby="rc-title rc-desc" viewBox="0 0 ${SIZE} ${SIZE}" width="${SIZE}" height="${SIZE}">
<title id="rc-title">Risk–coverage curve</title><desc id="rc-desc">Error rate of automated decisions (up to ${pct(maxRisk)}) against the share automated${certificate ? ", with the exact upper bound (dashed) and the target (red)" : ""}; the vertical line marks the chosen threshold.</desc>
${axes("share automated", "wrong automatic actions", (t) => pct(t * maxRisk))}
<path class="risk" d="${pathOf(points, maxRisk)}" fill="none" stroke="#1565c0" stroke-width="2"/>${target}
${legend(certificate !== undefined)}
<line x1="${scale(chosen)}" y1="${PAD}" x2="${scale(chosen)}" y2="${SIZE - PAD}" stroke="#555" stroke-dasharray="3 3"><title>chosen threshold: ${pct(chosen)} automated</title></line></svg>`;
}

/**
 * The async lane's rows of the sizing table (`npm run sizing`): batches of several sizes on the
 * template's async endpoint, at its maximum instance count and at larger ones, each from an idle
 * endpoint at zero: the time to the first and the last result, how long the submit step held
 * objects back, what expired in SageMaker's queue (each expiry a failed try, tried again; objects
 * dead-lettered after their last), instance-hours, the cost per 1,000 items answered and the
 * lane's idle cost per month. A template without an async lane gets one line saying so.
 */

import { asyncCostOf, expiryNote, formatSpan } from "./async-report.ts";
import { readAsyncShape } from "./async-template.ts";
import { asyncInstanceFigures } from "./async-times.ts";
import { TemplateShapeError } from "./errors.ts";
import { formatDollars } from "./report.ts";
import { simulateAsyncBatch } from "./simulation/async-sim.ts";

/** The batch sizes and maximum instance counts the table covers. */
export interface AsyncSizingOptions {
  readonly batches: readonly number[];
  /** Maximum instance counts besides the template's own. */
  readonly maxInstances: readonly number[];
}

/** The Markdown lines of the async lane's table for `template` (parsed JSON). */
export function asyncSizingTable(template: unknown, options: AsyncSizingOptions): string[] {
  let shape: ReturnType<typeof readAsyncShape>;
  try {
    shape = readAsyncShape(template);
  } catch (error) {
    if (error instanceof TemplateShapeError) return [`async lane: none in this template (${error.message})`];
    throw error;
  }
  const figures = asyncInstanceFigures(shape.instanceType);
  const lines = [
    `## async lane: ${shape.instanceType}, ${shape.itemsPerObject} items per object, target ${shape.backlogTarget} objects per instance, from ${shape.minInstances} instances`,
    "",
    "| items | max instances | first result | last result | held back at most | expired in SageMaker's queue | instance-hours | $ per 1,000 answered | idle $ per month |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  const maxima = [...new Set([shape.maxInstances, ...options.maxInstances])].sort((a, b) => a - b);
  for (const items of options.batches) {
    for (const maxInstances of maxima) {
      const at = { ...shape, maxInstances };
      const result = simulateAsyncBatch({ shape: at, items, secondsPerItem: figures.secondsPerItem });
      const cost = asyncCostOf(at, result, figures.dollarsPerHour);
      const held = result.longestHeldSeconds > 0 ? formatSpan(result.longestHeldSeconds) : "none";
      const expired = result.expired === 0 ? "none" : expiryNote(result);
      lines.push(
        `| ${items.toLocaleString("en")} | ${maxInstances} | ${formatSpan(result.firstResultSeconds)} | ${formatSpan(result.lastResultSeconds)} | ${held} | ${expired} | ${cost.instanceHours.toFixed(2)} | ${formatDollars(cost.perThousand)} | ${cost.idlePerMonth === 0 ? "$0" : formatDollars(cost.idlePerMonth)} |`,
      );
    }
  }
  return lines;
}

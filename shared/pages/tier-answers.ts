/**
 * What each model of a cascade answered, for reviewers: the tiers in the order they were asked,
 * each with its choice, its calibrated probability and what it did with the item (passed it on,
 * and why, or acted / sent it to people), so a reviewer sees where the models disagreed. A record
 * decided by one model names that model, as every page and the results file name it.
 */
import { type TierAnswer, tierCount, tierPolicy } from "../domain/cascade.ts";
import { decidingModel, modelInWords } from "../domain/deciding-model.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { Policy } from "../domain/policy/policy.ts";
import { html } from "./layout.ts";

const percent = (p: number) => `${Math.round(p * 100)}%`;

/** What the tier did with the item, in words. */
function outcome(answer: TierAnswer, threshold: number | undefined, last: boolean): string {
  const then = last ? "to people" : "passed on";
  switch (answer.reason) {
    case "below_threshold":
      return `below its ${threshold === undefined ? "" : `${percent(threshold)} `}threshold: ${then}`;
    case "option_needs_review":
      return `an option people always review: ${then}`;
    case "out_of_scope":
      return `out of scope: ${then}`;
    case "off_options":
      return `off the options: ${then}`;
    case "confident":
      return "acted on it";
    default:
      return `${answer.reason.replace(/_/g, " ")}: to people`;
  }
}

/** The cascade's answers as a table, or the one model's name for a record decided by one model. */
export function tierAnswers(record: DecisionRecord, policy: Policy | undefined): string {
  const tiers = record.tiers;
  if (!tiers || tiers.length === 0)
    return record.route
      ? `<p class="model">Decided by ${html(modelInWords(decidingModel(record, policy)))}.</p>`
      : "";
  const rows = tiers
    .map((answer, i) => {
      const threshold = policy && i < tierCount(policy) ? tierPolicy(policy, i).autoThreshold : undefined;
      const option = policy?.options.find((o) => o.id === answer.chosen)?.description ?? answer.chosen;
      return `<tr><td>${i + 1}. ${html(modelInWords(answer.model))}</td><td>${html(option)} <span>${percent(answer.topProbability)}</span></td><td>${html(outcome(answer, threshold, i === tiers.length - 1))}</td></tr>`;
    })
    .join("");
  return `<h3>Each model's answer</h3><table class="tiers"><thead><tr><th>model</th><th>its choice</th><th>what it did</th></tr></thead><tbody>${rows}</tbody></table>`;
}

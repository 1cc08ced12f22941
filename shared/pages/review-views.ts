/**
 * What reviewers see of an escalated item: why it came to people (with the numbers), the
 * distribution with the model's choice highlighted, the item as readable fields, the answer
 * buttons labelled with the option descriptions, who holds it, and its review history.
 */
import { tierCount, tierPolicy } from "../domain/cascade.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { Policy } from "../domain/policy/policy.ts";
import { claimedByOther, isAdmin, type Reviewer } from "../domain/review/review.ts";
import type { GoldMark } from "../domain/review/review-gold.ts";
import { html, stateFields, waited } from "./layout.ts";
import { csrfField } from "./session.ts";
import { tierAnswers } from "./tier-answers.ts";

const percent = (p: number | undefined) => (p === undefined ? "-" : `${Math.round(p * 100)}%`);

/** The option's description, or its id when the policy version is unknown. */
function describe(policy: Policy | undefined, id: string | undefined): string {
  return policy?.options.find((o) => o.id === id)?.description ?? id ?? "-";
}

/**
 * Why the item came to people, in words and numbers (the acting tier's, under a cascade). A
 * certification sample is named as one only to an admin (the lead): a reviewer who knew which
 * items back a certificate could label them differently, so `viewer` absent or a reviewer sees an
 * automated draw as a spot check and any other draw by the reason that routed it.
 */
export function reasonText(record: DecisionRecord, policy: Policy | undefined, viewer?: Reviewer): string {
  const top = `${percent(record.topProbability)} for <em>${html(describe(policy, record.chosen))}</em>`;
  const acted = record.route === "auto" ? " (already applied; your label does not undo it)" : "";
  // Drawn at random so that a certificate can rest on its label: the lead is told first.
  if (record.certification && viewer && isAdmin(viewer))
    return `Certification sample: drawn at random (chance ${percent(record.certification.inclusionProbability)}) to check automatic actions; ${top}${acted}`;
  if (record.gold && viewer && isAdmin(viewer))
    return `Gold item: ${goldText(record.gold, policy)}; ${top}${acted}`;
  // An automatic decision in the queue was drawn (a certification sample or a gold item): to a
  // reviewer, a spot check either way.
  if (record.route === "auto") return `Spot check: ${top}${acted}`;
  const tier = (record.tiers?.length ?? 1) - 1;
  const acting = policy && tier > 0 && tier < tierCount(policy) ? tierPolicy(policy, tier) : policy;
  const threshold = acting ? `${percent(acting.autoThreshold)} threshold` : "threshold";
  switch (record.reason) {
    case "below_threshold":
      return `${top}, below the ${threshold}`;
    case "option_needs_review":
      return `${top}: this option always goes to a person`;
    case "out_of_scope":
      return `${top}: the model found the item out of scope`;
    case "off_options": {
      const mass = record.allowedTokenMass;
      const floor = policy?.minAllowedTokenMass;
      return `Off the options: the option letters held ${typeof mass === "number" ? percent(mass) : "-"} of the model's probability${floor === undefined ? "" : `, below the ${percent(floor)} floor`} (${top})`;
    }
    case "uncertified":
      return `Not certified (${html(record.certificateProblem ?? "the policy requires a valid certificate")}): ${top} would have been automated`;
    case "audit_sample":
      return `Audit sample: ${top} would have been automated (at or above the ${threshold})`;
    default:
      return `${html(record.reason ?? "-")}: ${top}`;
  }
}

/** "known answer Remove; answered by Ann (right), Bo (Allow)": a gold item, to an admin. */
function goldText(gold: GoldMark, policy: Policy | undefined): string {
  const answers = gold.answers.map(
    (a) => `${html(a.reviewerName)} (${a.label === gold.answer ? "right" : html(describe(policy, a.label))})`,
  );
  return `known answer <em>${html(describe(policy, gold.answer))}</em>; ${answers.length ? `answered by ${answers.join(", ")}` : "no answer yet"} (${gold.answers.length} of ${gold.reviews})`;
}

/** The path of an item's page. */
export function itemPath(record: Pick<DecisionRecord, "itemId" | "policyId" | "policyVersion">): string {
  return `/items/${encodeURIComponent(record.policyId)}/${record.policyVersion}/${encodeURIComponent(record.itemId)}`;
}

/**
 * Badges: certification sample and gold item (to an admin only), a sample waiting for a second reviewer,
 * disputed, taken by someone else.
 */
export function badges(record: DecisionRecord, reviewer: Reviewer, now: number): string {
  const out: string[] = [];
  if (record.certification && isAdmin(reviewer)) out.push(`<span class="badge">certification sample</span>`);
  if (record.gold && isAdmin(reviewer)) out.push(`<span class="badge">gold item</span>`);
  // A disputed item had its second review: only an admin's label is missing, until one is given.
  if (record.disputed && record.status === "pending_review")
    out.push(`<span class="badge">disputed: an admin decides</span>`);
  else if (record.disputed && record.label !== undefined)
    out.push(`<span class="badge settled">dispute settled by ${html(record.reviewer ?? "an admin")}</span>`);
  else if (record.firstReview)
    out.push(
      `<span class="badge">second review needed (first: ${html(record.firstReview.reviewerName)})</span>`,
    );
  if (claimedByOther(record.claim, reviewer, now))
    out.push(
      `<span class="taken">taken by ${html(record.claim!.reviewerName)} for ${Math.max(1, Math.ceil((record.claim!.until - now) / 60_000))} min</span>`,
    );
  return out.join(" ");
}

/** One row of the queue table. */
export function queueRow(
  record: DecisionRecord,
  policy: Policy | undefined,
  reviewer: Reviewer,
  now: number,
): string {
  const text = excerpt(record.state);
  return `<tr><td data-label="item"><a href="${itemPath(record)}">${html(record.itemId)}</a> ${badges(record, reviewer, now)}${text ? `<div class="excerpt">${html(text)}</div>` : ""}</td>
<td data-label="policy"><span class="id">${html(record.policyId)}</span> v${record.policyVersion}</td><td data-label="waited">${waited(record.createdAt, now)}</td><td data-label="why a person" class="reason">${reasonText(record, policy, reviewer)}</td></tr>`;
}

function bars(record: DecisionRecord, policy: Policy | undefined): string {
  const options =
    policy?.options ?? Object.keys(record.distribution ?? {}).map((id) => ({ id, description: id }));
  return options
    .map((o, i) => {
      const p = record.distribution?.[o.id] ?? 0;
      const chosen = o.id === record.chosen;
      return `<div class="bar${chosen ? " chosen" : ""}"><span id="opt-${i}">${html(o.description)}${chosen ? " <small>(model's choice)</small>" : ""}</span>
<meter min="0" max="1" value="${p}" aria-labelledby="opt-${i}">${percent(p)}</meter><span>${(p * 100).toFixed(1)}%</span></div>`;
    })
    .join("");
}

/** The first words of an item's text (its string fields joined), for the queue. */
export function excerpt(state: unknown, limit = 120): string {
  const texts: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === "string") texts.push(value);
    else if (typeof value === "number" || typeof value === "boolean") texts.push(String(value));
    else if (Array.isArray(value)) value.forEach(collect);
    else if (value && typeof value === "object") Object.values(value).forEach(collect);
  };
  collect(state);
  const text = texts
    .filter((t) => t.trim())
    .join(" · ")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > limit ? `${text.slice(0, limit - 1).trimEnd()}…` : text;
}

/**
 * The review history. While a sample waits for its second (or an admin's) label, a reviewer sees
 * who labelled it but not the labels: the second label must not lean on the first.
 */
function history(record: DecisionRecord, policy: Policy | undefined, reviewer: Reviewer): string {
  if (!record.reviewHistory?.length) return "";
  const open =
    record.status === "pending_review" && (record.firstReview || record.disputed) && !isAdmin(reviewer);
  const words = {
    label: "labelled",
    first_label: "gave the first label",
    change: "changed the label to",
    undo: "undid the label",
  };
  const items = record.reviewHistory
    .map(
      (e) =>
        `<li><time datetime="${html(e.at)}">${html(e.at.slice(0, 19).replace("T", " "))}</time> ${html(e.reviewerName)} ${words[e.action]}${e.label && !open ? ` <strong>${html(describe(policy, e.label))}</strong>` : ""}${e.previousLabel && !open ? ` (was ${html(describe(policy, e.previousLabel))})` : ""}</li>`,
    )
    .join("");
  return `<h3>History</h3><ol>${items}</ol>`;
}

/** The form fields that name the item. */
export function itemFields(record: DecisionRecord, csrf: string): string {
  return `${csrfField(csrf)}<input type="hidden" name="itemId" value="${html(record.itemId)}">
<input type="hidden" name="policyId" value="${html(record.policyId)}"><input type="hidden" name="policyVersion" value="${record.policyVersion}">`;
}

/** The item card: reason, fields, distribution, answers (or why not), revision controls, history. */
export function itemCard(
  record: DecisionRecord,
  policy: Policy | undefined,
  reviewer: Reviewer,
  view: {
    now: number;
    csrf: string;
    mayAnswer: boolean;
    mayRevise: boolean;
    blocked?: string;
    /** The claim or take-over control, or a note that the reviewer holds the item. */
    claim?: string;
  },
): string {
  const options = policy?.options ?? [];
  const answerAction = record.status === "reviewed" ? "change" : "label";
  const buttons = options
    .map(
      (o, i) =>
        `<button type="submit" name="label" value="${html(o.id)}" data-description="${html(o.description)}" aria-keyshortcuts="${i + 1}"${o.id === record.label ? " disabled" : ""}>${i + 1}. ${html(o.description)}</button>`,
    )
    .join("");
  const answers =
    view.mayAnswer || view.mayRevise
      ? `<form method="post" action="/reviews">${itemFields(record, view.csrf)}<input type="hidden" name="action" value="${answerAction}">
<p id="how">${answerAction === "change" ? "Change the label" : "Answer"}: click, or press a number key and then Enter (Shift+Enter: answer and go back to the queue).</p>
<div class="answers" role="group" aria-label="Answers" aria-describedby="how">${buttons}</div>
<p><label><input type="checkbox" name="then" value="next" checked> then open the next item</label></p><p class="confirm" aria-live="polite"></p></form>`
      : `<p class="taken" role="status">${html(view.blocked ?? "You cannot answer this item.")}</p>`;
  const undo = view.mayRevise
    ? `<form method="post" action="/reviews">${itemFields(record, view.csrf)}<input type="hidden" name="action" value="undo"><button type="submit">Undo the label (the item waits for review again)</button></form>`
    : "";
  // A near-duplicate the product's text key cannot see: counted once with the other in a certificate.
  const duplicate =
    view.mayAnswer || view.mayRevise
      ? `<form method="post" action="/reviews" class="duplicate">${itemFields(record, view.csrf)}<input type="hidden" name="action" value="duplicate"><label>Near-duplicate of item <input name="of" required autocomplete="off"></label> <button type="submit">Mark as duplicate</button></form>`
      : "";
  const status =
    record.status === "reviewed"
      ? `<p role="status">Labelled <strong>${html(describe(policy, record.label))}</strong> by ${html(record.reviewer)}.</p>`
      : "";
  return `<article data-item="${html(record.itemId)}" data-autofocus tabindex="-1" aria-labelledby="item-title">
<h2 id="item-title">${html(record.itemId)} <small>${html(record.policyId)} v${record.policyVersion}, waited ${waited(record.createdAt, view.now)}</small> ${badges(record, reviewer, view.now)}</h2>
<p class="reason">${reasonText(record, policy, reviewer)}.</p>${view.claim ?? ""}${stateFields(record.state)}${bars(record, policy)}${tierAnswers(record, policy)}${status}${answers}${undo}${duplicate}${history(record, policy, reviewer)}</article>`;
}

/**
 * One definition of "automated" (issue 33, item 6): on one set of decisions, the report's
 * threshold table, the certificate, the what-if (summary and page), `decide status` and the
 * decisions page count the same items the policy acts on (automated, and audit samples: it would
 * have acted on them but drew them for a person's label first), and show the audit samples apart.
 * Before, the what-if counted an audit sample as automatic and its page listed it as a route
 * change; `decide status` counted only record states (audit samples hid in pending_review); the
 * decisions page showed an audit sample as a plain "human".
 */
import { describe, expect, it } from "vitest";
import { statusCommand } from "../../cli/status.ts";
import { thresholdTable } from "../../shared/domain/calibration/calibrate-parts.ts";
import { unitsAtGrid } from "../../shared/domain/calibration/certificate/certificate-units.ts";
import { certifiedItems } from "../../shared/domain/calibration/certificate/certified-items.ts";
import { calibratedProbabilities, mapOf } from "../../shared/domain/calibration/map.ts";
import type { LabelledLogits } from "../../shared/domain/calibration/temperature.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { argmax } from "../../shared/domain/probability.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { countHandling, handlingText, routeDecision, wouldAutomate } from "../../shared/domain/routing.ts";
import { compareDecisions, type WhatIfRow } from "../../shared/domain/what-if/compare.ts";
import { decisionFilters, decisionsBody } from "../../shared/pages/decisions-view.ts";
import { renderWhatIf } from "../../shared/reports/what-if-report.ts";
import { MODERATION } from "../helpers/review-flow.ts";

const policy = { ...MODERATION, auditSampleRate: 0.2 };
const at = "2030-05-01T00:00:00.000Z";

/** 400 labelled decisions: confident and not, a quarter `remove` (never automated), 3% wrong. */
function decisions() {
  const random = new SeededRandom(33);
  return Array.from({ length: 400 }, (_, i) => {
    const top = i % 4 === 0 ? 2 : i % 2;
    const logits = [0, 0, 0, -3];
    logits[top] = 4 * random.nextFloat() + 0.5;
    const probabilities = calibratedProbabilities(logits, mapOf(policy));
    const chosen = argmax(probabilities);
    const label = random.nextFloat() < 0.97 ? chosen : (chosen + 1) % 3;
    const itemId = `D-${i}`;
    const routing = routeDecision(policy, probabilities, itemId);
    const record: DecisionRecord = {
      itemId,
      policyId: policy.id,
      policyVersion: policy.version,
      status: routing.route === "auto" ? "auto_approved" : "pending_review",
      route: routing.route,
      reason: routing.reason,
      chosen: routing.chosen,
      topProbability: routing.topProbability,
      createdAt: at,
      updatedAt: at,
      eventPublished: true,
    };
    return { logits, probabilities, label, routing, record };
  });
}

describe('one definition of "automated"', () => {
  const all = decisions();
  const counts = countHandling(all.map((d) => d.record));

  it("has automated items, audit samples and escalations to count", () => {
    expect(counts.automated).toBeGreaterThan(20);
    expect(counts.audit_sample).toBeGreaterThan(5);
    expect(counts.escalated).toBeGreaterThan(20);
    expect(counts.actedOn).toBe(counts.automated + counts.audit_sample);
    // Routing acts on exactly what the labelled-item rule says it would.
    expect(counts.actedOn).toBe(all.filter((d) => wouldAutomate(policy, d.probabilities)).length);
  });

  it("the threshold table and the certificate count what the policy acts on", () => {
    const rows: LabelledLogits[] = all.map((d) => ({ logits: d.logits, label: d.label }));
    const calibrated = all.map((d) => ({ probabilities: d.probabilities, label: d.label }));
    const row = thresholdTable(policy, calibrated, rows).find((r) => r.threshold === policy.autoThreshold)!;
    expect(row.automated).toBe(counts.actedOn);
    expect(row.coverage).toBeCloseTo(counts.actedOn / all.length, 12);
    const [units] = unitsAtGrid(certifiedItems(policy, rows, mapOf(policy)), [policy.autoThreshold]);
    expect(units!.automated).toBe(counts.actedOn);
    expect(units!.coverage).toBeCloseTo(counts.actedOn / all.length, 12);
  });

  it("the what-if's summary and page count the same, with the audit samples apart", () => {
    const rows: WhatIfRow[] = all.map((d) => ({
      itemId: d.record.itemId,
      weight: 1,
      live: d.routing,
      candidate: d.routing,
    }));
    const summary = compareDecisions(rows, 1);
    expect(summary.coverage.candidate * all.length).toBeCloseTo(counts.actedOn, 9);
    expect(summary.auditSamples.candidate * all.length).toBeCloseTo(counts.audit_sample, 9);
    expect(summary.toHuman.items + summary.toAuto.items).toBe(0);
    const page = renderWhatIf({
      policyId: policy.id,
      liveVersion: 1,
      candidateVersion: 1,
      since: at,
      source: "stored logits",
      summary,
      rows,
      cost: [],
    });
    const share = `${((counts.actedOn / all.length) * 100).toFixed(1)}%`;
    expect(page).toContain(`share automated (audit samples included)</th><td>${share}`);
    expect(page).toContain("<p>None.</p>"); // no item changes route
  });

  it("decide status and the decisions page count the same, with the audit samples apart", () => {
    const status = {
      records: {
        [policy.id]: {
          auto_approved: counts.automated,
          pending_review: counts.audit_sample + counts.escalated,
        },
      },
      automation: { [policy.id]: counts },
      certificates: {},
      queues: {},
      deadLetters: {},
      asyncBacklog: { objects: 0, items: 0, oldestSubmittedAt: undefined },
    };
    const printed = statusCommand.print(status, statusCommand.parse([], { DECISIONS_TABLE: "t" }));
    expect(printed.lines).toContain(`  ${policy.id.padEnd(22)} ${handlingText(counts)}`);
    expect(handlingText(counts)).toBe(
      `${counts.actedOn} acted on (${counts.automated} automated, ${counts.audit_sample} audit samples, which people label first), ${counts.escalated} escalated`,
    );
    expect(handlingText({ automated: 0, audit_sample: 1, escalated: 0, actedOn: 1 })).toContain(
      "1 audit sample,",
    );
    const registry = new PolicyRegistry([policy]);
    const body = decisionsBody(
      { records: all.map((d) => d.record), continued: false },
      decisionFilters({}, registry),
      registry,
    );
    expect(body).toContain(`On this page: ${handlingText(counts)}.`);
    expect(body.split("human (audit sample)</td>")).toHaveLength(counts.audit_sample + 1);
  });
});

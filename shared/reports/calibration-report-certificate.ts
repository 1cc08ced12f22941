/**
 * The calibration report's certificate section, one story on one page: the certified threshold and
 * its bound (once), where the labels it rests on came from and how each counts, and the
 * certificate beside the live audit estimate of the same version, with what it means when the two
 * disagree, and the bench's P(certified) and P(wrong | certified) at its setting; which kind it is
 * (a pre-registered sample's, or learn-then-test on the labels held).
 */
import type { PolicyAudit } from "../domain/audit/policy-audit.ts";
import type { Certification } from "../domain/calibration/calibrate-parts.ts";
import type { RegisteredResult } from "../domain/calibration/certificate/certificate.ts";
import { certificateSentence, kindsText } from "../domain/calibration/certificate/certificate.ts";
import { benchText } from "./certificate-bench.ts";
import { escapeHtml, pct } from "./report-style.ts";

/** Where the certificate's labels came from, in words. */
function sourcesText(c: Certification): string {
  const kinds = c.kinds ? kindsText(c.kinds) : "";
  const rests = kinds
    ? `It rests on the labelled decisions at or above its threshold: ${kinds}.`
    : "It rests on no labelled decision the policy would automate.";
  const method =
    c.evidence?.method === "fay-feuer"
      ? "They were chosen at different rates, so each counts for the decisions it stands for (the inverse of its chance of being labelled) and the bound is the gamma bound of Fay and Feuer (1997), which is conservative for such weighted counts."
      : "They count alike (each stood the same chance of being labelled), so the bound is the exact binomial (Clopper–Pearson) bound.";
  return `${rests} ${method} An escalation counts only where every decision like it was escalated, an audit or certification sample at its draw's rate; near-duplicates sharing a group count once.`;
}

/** What a registered certificate rests on, in words. */
function registeredSources(c: Certification & RegisteredResult): string {
  const f = c.registered;
  return `It rests on its sample ${f.sample} alone: ${f.n} decisions drawn with the same chance from the frame, each judged as the version decided it; ${f.unlabelled} not labelled (or not settled) counted as wrong; near-duplicates sharing a group count once. Escalations, audits and other labels do not count toward it. It was plan ${f.round} of this version, tested at ${pct(f.level)} so that the version's plans together keep to ${pct(c.confidence)}.`;
}

/** The certificate beside the live audit estimate of the same version, and what a disagreement means. */
function liveText(c: Certification, live: PolicyAudit | undefined, version: number): string {
  if (!live) return "No live audit estimate was read: the certificate stands alone.";
  const own = live.strata.filter((s) => s.policyVersion === version);
  const labelled = own.reduce((sum, s) => sum + s.labelled, 0);
  if (labelled === 0 || live.overall.labelled === 0)
    return `No audit sample of version ${version} is labelled yet: once the version runs, decide audit gives the live rate to set beside the certificate's ${pct(c.maxError)}.`;
  const [low, high] = live.overall.interval;
  const head = `Live audits since ${live.since.slice(0, 10)}: ${pct(live.overall.rate)} wrong (interval ${pct(low)} to ${pct(high)}, ${live.overall.labelled} audit labels), beside the certificate's ${c.threshold === null ? "target" : "bound"} ${pct(c.bound ?? c.maxError)} under ${pct(c.maxError)}.`;
  if (low > c.maxError)
    return `${head} They disagree: live decisions are wrong more often than the certificate allows. The labels it rests on no longer describe live traffic (drift, a new kind of item, or a selection the certificate could not see): do not apply it; send more to people and certify on fresh labels.`;
  if (high <= c.maxError) return `${head} They agree: the live rate is within the target too.`;
  return `${head} The live interval spans the target: more audit labels would tell whether live traffic keeps to it.`;
}

/** The section's HTML. */
export function certificateSectionHtml(
  c: Certification,
  live: PolicyAudit | undefined,
  version: number,
): string {
  const bench = "registered" in c ? undefined : benchText(c);
  const method =
    "registered" in c
      ? "Method: a pre-registered sample (the plan written with the sample before labelling, its thresholds tested in a fixed sequence from the strictest down on the sample's drawn decisions alone, each not labelled counted as wrong)."
      : "Method: Learn then Test on the labels held, not pre-registered (fixed-sequence testing from the strictest threshold down).";
  return `<p id="certificate"><strong>${escapeHtml(certificateSentence(c))}</strong>. ${method}</p>
<p id="certificate-sources">${escapeHtml("registered" in c ? registeredSources(c) : sourcesText(c))}</p>
<p id="certificate-live">${escapeHtml(liveText(c, live, version))}</p>${bench ? `\n<p id="certificate-bench">${escapeHtml(bench)}</p>` : ""}`;
}

/**
 * A certificate recomputed on its labels: the labels read back (from the decisions table or a
 * labelled file) must be the set it names (same SHA-256), and the certification run again on
 * them, under the version's own calibration map, must give the same threshold and counts. A
 * certificate that passes is "verified"; one whose labels are not at hand stays "unverified"
 * however well its counts hold (`certificate-check.ts` checks those alone).
 */

import { tierPolicy } from "../../cascade.ts";
import type { Policy } from "../../policy/policy.ts";
import { cascadeLabelSetSha256 } from "../cascade-calibration.ts";
import { mapOf } from "../map.ts";
import { labelSetSha256 } from "../provenance.ts";
import { certifyCascade } from "./cascade-certificate.ts";
import { certifyThreshold } from "./certificate.ts";
import { type CascadeRow, cascadeItems, certifiedItems } from "./certified-items.ts";

/** The rows at hand are not the label set a certificate names. */
function otherLabels(rows: number, named: number, where: string): string {
  return `its label set is not the ${rows} labels ${where} (the certificate names ${named}): labels were changed or added since, or the certificate was not made on them`;
}

/**
 * Why `policy`'s certificate is not the one `rows` give, or undefined when recomputing it on them
 * gives the same threshold, automated items and errors. `where` names the rows in the message;
 * `floor` is the lowest threshold they may speak for (`certifyThreshold`).
 */
export function certificateOnLabelsProblem(
  policy: Policy,
  rows: readonly CascadeRow[],
  where: string,
  floor = 0,
): string | undefined {
  const c = policy.certificate;
  if (!c) return "no certificate";
  if (c.registered)
    return `it is a pre-registered sample's certificate (${c.registered.sample}): it is recomputed from that sample's records in the decisions table, not from ${rows.length} labels ${where}`;
  // A cascade's certificate is recomputed over both models (the rows carry the second's answers).
  if (c.tiers) return cascadeCertificateOnLabelsProblem(policy, rows, where, floor);
  if (labelSetSha256(rows) !== c.labelsSha256) return otherLabels(rows.length, c.labels, where);
  const again = certifyThreshold(certifiedItems(policy, rows, mapOf(policy)), c, floor);
  const same =
    again.threshold === c.threshold &&
    again.labels === c.labels &&
    (c.threshold === null || (again.automated === c.automated && again.errors === c.errors));
  if (same) return undefined;
  const said = (t: number | null, automated: number, errors: number) =>
    t === null ? "no threshold" : `threshold ${t} (${errors} wrong of ${automated} automated)`;
  return `recomputed on the labels ${where} it certifies ${said(again.threshold, again.automated, again.errors)}, not ${said(c.threshold, c.automated, c.errors)}`;
}

/**
 * Why a cascade's certificate is not the one `rows` give, or undefined when recomputing it on them
 * (under the version's own maps) gives the same thresholds, automated units and errors.
 */
function cascadeCertificateOnLabelsProblem(
  policy: Policy,
  rows: readonly CascadeRow[],
  where: string,
  floor = 0,
): string | undefined {
  const c = policy.certificate;
  if (!c?.tiers) return "no cascade certificate";
  if (cascadeLabelSetSha256(rows) !== c.labelsSha256) return otherLabels(rows.length, c.labels, where);
  const maps = [mapOf(policy), mapOf(tierPolicy(policy, 1))] as const;
  const again = certifyCascade(cascadeItems(policy, rows, maps), c, floor);
  const stated = c.threshold === null ? null : [c.threshold, c.tiers[1]?.threshold];
  const same =
    again.labels === c.labels &&
    (stated === null
      ? again.thresholds === null
      : again.thresholds?.[0] === stated[0] &&
        again.thresholds?.[1] === stated[1] &&
        again.automated === c.automated &&
        again.errors === c.errors);
  if (same) return undefined;
  const said = (t: readonly (number | undefined)[] | null, automated: number, errors: number) =>
    t === null
      ? "no pair of thresholds"
      : `thresholds ${t.join(" and ")} (${errors} wrong of ${automated} automated)`;
  return `recomputed on the labels ${where} it certifies ${said(again.thresholds, again.automated, again.errors)}, not ${said(stated, c.automated, c.errors)}`;
}

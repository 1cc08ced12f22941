/**
 * A cascade's certificate records every tier (model name and file, prompt layout, threshold,
 * calibration) and goes stale when any tier changes: another model file scoring a later tier's
 * decision, another model named for a tier, a tier's threshold or calibration edited, a tier
 * added or removed. A certificate without tiers keeps speaking for the first tier alone.
 */
import { describe, expect, it } from "vitest";
import { certificateProblem } from "../../shared/domain/calibration/provenance.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { cascadeCertified } from "../helpers/cascade-certificate.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const SMALL = "a".repeat(64);
const LARGE = "d".repeat(64);
const LAYOUT = "choice-v1@policy-first";

const BASE = {
  ...TEAMS_POLICY,
  model: "small",
  cascade: [{ model: "large", autoThreshold: 0.7, temperature: 2 }],
};

const POLICY = cascadeCertified(parsePolicy(BASE), { first: SMALL, later: LARGE, layout: LAYOUT });
const by = (modelSha256: string, tier?: number) => ({
  modelSha256,
  promptVersion: LAYOUT,
  ...(tier === undefined ? {} : { tier }),
});

describe("a cascade certificate's provenance", () => {
  it("holds for each tier's decisions by its certified model", () => {
    expect(certificateProblem(POLICY)).toBeUndefined();
    expect(certificateProblem(POLICY, by(SMALL))).toBeUndefined();
    expect(certificateProblem(POLICY, by(LARGE, 1))).toBeUndefined();
  });

  it("is stale for a decision of a later tier scored by another model file", () => {
    expect(certificateProblem(POLICY, by(SMALL, 1))).toBe("certificate stale: model of tier 2 changed");
    expect(certificateProblem(POLICY, by(LARGE, 0))).toBe("certificate stale: model changed");
    expect(certificateProblem(POLICY, { ...by(LARGE, 1), promptVersion: "choice-v2" })).toBe(
      "certificate stale: prompt layout of tier 2 changed",
    );
    expect(certificateProblem(POLICY, by(LARGE, 2))).toBe("certificate stale: it does not cover tier 3");
  });

  it("is stale when the policy's tiers change", () => {
    const edit = (cascade: Policy["cascade"]) =>
      parsePolicy({ ...BASE, cascade, certificate: POLICY.certificate });
    expect(certificateProblem(edit([{ model: "huge", autoThreshold: 0.7, temperature: 2 }]))).toBe(
      "certificate stale: tier 2's model changed",
    );
    expect(certificateProblem(edit([{ model: "large", autoThreshold: 0.6, temperature: 2 }]))).toBe(
      "certificate stale: tier 2's calibration changed",
    );
    expect(certificateProblem(edit([{ model: "large", autoThreshold: 0.7, temperature: 1.5 }]))).toBe(
      "certificate stale: tier 2's calibration changed",
    );
    expect(
      certificateProblem(
        edit([
          { model: "large", autoThreshold: 0.7, temperature: 2 },
          { model: "huge", autoThreshold: 0.7, temperature: 1 },
        ]),
      ),
    ).toBe("certificate stale: the cascade's tiers changed");
    expect(certificateProblem(parsePolicy({ ...BASE, model: "tiny", certificate: POLICY.certificate }))).toBe(
      "certificate stale: tier 1 changed",
    );
  });

  it("without tiers speaks for the first tier alone, as before", () => {
    const { tiers: _tiers, ...single } = POLICY.certificate!;
    const policy = parsePolicy({ ...BASE, certificate: single });
    expect(certificateProblem(policy, by(SMALL))).toBeUndefined();
    expect(certificateProblem(policy, by(LARGE, 1))).toBe("certificate stale: it does not cover tier 2");
  });
});

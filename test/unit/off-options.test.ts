/**
 * The off-options guard: routing sends a decision whose letters hold too little of the model's
 * probability to people (and only when the mass was read), the review page says why with the
 * figure, and calibration proposes a floor only when the mass separates right from wrong.
 */
import { describe, expect, it } from "vitest";
import { proposeMassFloor } from "../../shared/domain/calibration/off-options.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { routeDecision } from "../../shared/domain/routing.ts";
import { reasonText } from "../../shared/pages/review-views.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const policy = parsePolicy({
  ...TEAMS_POLICY,
  options: [TEAMS_POLICY.options[0]!, { id: "none", description: "None of these", automate: false }],
  outOfScopeOption: "none",
  minAllowedTokenMass: 0.5,
});

describe("off-options guard", () => {
  it("routes a confident decision to people when its letters hold less than the floor", () => {
    expect(routeDecision(policy, [0.95, 0.05], "a", 0.3)).toMatchObject({
      route: "human",
      reason: "off_options",
    });
    expect(routeDecision(policy, [0.95, 0.05], "a", 0.7)).toMatchObject({
      route: "auto",
      reason: "confident",
    });
    // Not read: the guard does not apply; out of scope stays out of scope.
    expect(routeDecision(policy, [0.95, 0.05], "a", null).route).toBe("auto");
    expect(routeDecision(policy, [0.1, 0.9], "a", 0.3).reason).toBe("out_of_scope");
    const { minAllowedTokenMass: _, ...unguarded } = policy;
    expect(routeDecision(parsePolicy(unguarded), [0.95, 0.05], "a", 0.01).route).toBe("auto");
  });

  it("explains it on the review page with the figure and the floor", () => {
    const text = reasonText(
      {
        itemId: "a",
        policyId: "tickets",
        policyVersion: 1,
        status: "pending_review",
        reason: "off_options",
        chosen: "billing",
        topProbability: 0.95,
        allowedTokenMass: 0.31,
        createdAt: "",
        updatedAt: "",
        eventPublished: true,
      },
      policy,
    );
    expect(text).toContain("the option letters held 31% of the model's probability, below the 50% floor");
  });

  it("proposes a floor where the mass separates right from wrong, and says when it does not", () => {
    const separated = [
      ...Array.from({ length: 40 }, (_, i) => ({ mass: 0.8 + i * 0.004, correct: true })),
      ...Array.from({ length: 10 }, (_, i) => ({ mass: 0.2 + i * 0.02, correct: false })),
    ];
    const proposal = proposeMassFloor(separated);
    expect(proposal.floor).toBeGreaterThan(0.38);
    expect(proposal.floor).toBeLessThan(0.8);
    expect(proposal.catchesIncorrect).toBe(1);
    expect(proposal.costsCorrect).toBe(0);
    const mixed = Array.from({ length: 50 }, (_, i) => ({
      mass: 0.5 + (i % 10) * 0.05,
      correct: i % 3 !== 0,
    }));
    const none = proposeMassFloor(mixed);
    expect(none.floor).toBeUndefined();
    expect(none.note).toMatch(/does not separate/);
    expect(proposeMassFloor([{ mass: 0.9, correct: true }]).note).toMatch(/both right and wrong/);
  });
});

describe("a policy that asks no mass (tokenMass: false)", () => {
  const item = { id: "T-1", policy: TEAMS_POLICY.id, state: "charged twice" };

  it("asks the endpoint for the letters alone; by default the pipeline asks for the mass", () => {
    expect(systemOneRequest(item, parsePolicy(TEAMS_POLICY)).token_mass).toBe(true);
    expect(systemOneRequest(item, parsePolicy({ ...TEAMS_POLICY, tokenMass: false })).token_mass).toBe(false);
  });

  it("cannot carry a floor it could never read, on the policy or a later model", () => {
    expect(() => parsePolicy({ ...policy, tokenMass: false })).toThrow(
      /tokenMass: false leaves every decision without its allowed-token mass/,
    );
    const cascade = [{ model: "demo-large", autoThreshold: 0.9, minAllowedTokenMass: 0.4 }];
    expect(() => parsePolicy({ ...TEAMS_POLICY, tokenMass: false, cascade })).toThrow(/minAllowedTokenMass/);
    expect(() => parsePolicy({ ...TEAMS_POLICY, tokenMass: false })).not.toThrow();
  });
});

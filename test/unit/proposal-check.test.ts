/**
 * `--apply-proposal` takes only what calibration owns: a hand-made "proposal" that automates
 * every option, removes out_of_scope, stops audit sampling and replaces the question is refused
 * naming each field; a calibration field outside its documented range (`autoThreshold 0`,
 * `temperature 1e-300`) is refused; a certificate must hold for the version it is in; and a real
 * proposal is applied with a field-by-field diff.
 */
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkProposal } from "../../shared/domain/calibration/proposal-check.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const current = parsePolicy(
  JSON.parse(await readFile(join(REPO_ROOT, "events", "policies", "ticket-routing.v1.json"), "utf8")),
);
const next = (changes: Record<string, unknown>): Policy =>
  parsePolicy({ ...current, version: 2, ...changes });

describe("checkProposal", () => {
  it("refuses every change outside calibration, naming the field", () => {
    const rewrite = next({
      question: "Anything?",
      auditSampleRate: 0,
      options: current.options.filter((o) => o.id !== "out_of_scope").map((o) => ({ ...o, automate: true })),
      outOfScopeOption: undefined,
    });
    const { refusals } = checkProposal(current, rewrite);
    expect(refusals.some((r) => r.startsWith("question: a calibration proposal may not change it"))).toBe(
      true,
    );
    expect(refusals.some((r) => r.startsWith("auditSampleRate: "))).toBe(true);
    expect(refusals.some((r) => r.startsWith("options (4 -> 3 entries): "))).toBe(true);
    expect(refusals.some((r) => r.startsWith("outOfScopeOption: "))).toBe(true);
    const automated = next({
      options: current.options.map((o) => (o.id === "account" ? { ...o, automate: !o.automate } : o)),
    });
    expect(checkProposal(current, automated).refusals[0]).toMatch(/^options\.2\.automate: /);
    expect(checkProposal(current, next({ requireCertificate: false })).refusals[0]).toMatch(
      /^requireCertificate: /,
    );
  });

  it("refuses calibration fields outside their documented range", () => {
    expect(checkProposal(current, next({ autoThreshold: 0 })).refusals).toEqual([
      "autoThreshold: 0 is outside the documented range (0.5 to 1)",
    ]);
    expect(checkProposal(current, next({ temperature: 1e-300 })).refusals).toEqual([
      "temperature: 1e-300 is outside the documented range (0.05 to 20)",
    ]);
    // The offsets that broke apply (obs. 1): refused here by name, and by the schema too.
    const offsets = { ...next({}), optionBias: [27.08, -0.5, 15.76, -42.35] };
    expect(checkProposal(current, offsets).refusals).toEqual([
      "optionBias: offset 27.08 is outside the documented range (-10 to 10)",
    ]);
    expect(() => parsePolicy(offsets)).toThrow(/optionBias\.0: Too big: expected number to be <=10/);
    expect(checkProposal(current, next({ prior: [0.5, 0.5, 0.5, 0.5] })).refusals).toEqual([
      "prior: sums to 2, not 1",
    ]);
  });

  it("lists each calibration change, and takes them", () => {
    const proposal = next({ temperature: 1.8353, autoThreshold: 0.9512, optionBias: [0.1, -0.1, 0, 0] });
    const check = checkProposal(current, proposal);
    expect(check.refusals).toEqual([]);
    expect(check.changes.map((c) => c.field).sort()).toEqual(["autoThreshold", "optionBias", "temperature"]);
  });
});

describe("decide calibrate --apply-proposal", () => {
  async function folder(proposal: unknown): Promise<{ policies: string; file: string }> {
    const dir = await mkdtemp(join(tmpdir(), "apply-"));
    const policies = join(dir, "policies");
    await mkdir(policies);
    await writeFile(join(policies, "ticket-routing.v1.json"), JSON.stringify(current));
    const file = join(dir, "proposal.json");
    await writeFile(file, JSON.stringify(proposal));
    return { policies, file };
  }

  it("refuses a rewrite of the policy, naming the fields, and writes nothing", async () => {
    const { policies, file } = await folder({
      ...current,
      version: 2,
      question: "Anything?",
      auditSampleRate: 0,
      options: current.options.filter((o) => o.id !== "out_of_scope").map((o) => ({ ...o, automate: true })),
      outOfScopeOption: undefined,
    });
    const run = await runDecide(["calibrate", "--apply-proposal", file, "--policies-dir", policies]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cannot be applied: .*question: a calibration proposal may not change it/);
    expect(run.stderr).toMatch(/auditSampleRate: /);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    await expect(readFile(join(policies, "ticket-routing.v2.json"))).rejects.toThrow(/ENOENT/);
  });

  it("applies a calibration change and prints it field by field", async () => {
    const { policies, file } = await folder({
      ...current,
      version: 2,
      temperature: 1.8353,
      autoThreshold: 0.9512,
    });
    const run = await runDecide(["calibrate", "--apply-proposal", file, "--policies-dir", policies]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/wrote .*ticket-routing\.v2\.json: ticket-routing version 1 -> 2:/);
    expect(run.stdout).toMatch(/^ {2}temperature 1 -> 1\.8353$/m);
    expect(run.stdout).toMatch(/^ {2}autoThreshold 0\.8 -> 0\.9512$/m);
  });

  it("refuses a proposal that automates nothing unless --accept-no-automation is given, naming the plan command", async () => {
    // Before: applied (exit 0), and every ticket went to people from then on.
    const { policies, file } = await folder({ ...current, version: 2, autoThreshold: 1 });
    const refused = await runDecide(["calibrate", "--apply-proposal", file, "--policies-dir", policies]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.split("\n")[0]).toBe(
      `decide calibrate: ${file} cannot be applied: no certificate: applying this sends every item to people (autoThreshold 0.8 -> 1); plan the labels a certificate needs with  npx decide calibrate --plan --policy ticket-routing --max-auto-error 0.05 --confidence 0.95, or give --accept-no-automation to apply it anyway`,
    );
    await expect(readFile(join(policies, "ticket-routing.v2.json"))).rejects.toThrow(/ENOENT/);
    const accepted = await runDecide([
      "calibrate",
      "--apply-proposal",
      file,
      "--policies-dir",
      policies,
      "--accept-no-automation",
    ]);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toMatch(/^ {2}autoThreshold 0\.8 -> 1$/m);
  });
});

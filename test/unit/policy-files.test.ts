/**
 * Policy, proposal and candidate files that repeat a key are refused with the key named (issue 36,
 * observation 7): JSON.parse keeps the last of two silently, so a file saying `autoThreshold`
 * twice meant whichever came last, and `decide calibrate --apply-proposal` and `decide what-if
 * --candidate` went on with it.
 */
import { copyFile, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyProposal } from "../../cli/calibrate/calibrate-apply.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const POLICY = join(REPO_ROOT, "events", "policies", "ticket-routing.v1.json");

/** The ticket-routing policy's text with `key` written twice at the top (the second with `value`). */
async function repeating(key: string, value: unknown, version?: number): Promise<string> {
  const policy = JSON.parse(await readFile(POLICY, "utf8")) as Record<string, unknown>;
  if (version !== undefined) policy.version = version;
  const text = JSON.stringify(policy, null, 2);
  return text.replace(/\n}$/, `,\n  ${JSON.stringify(key)}: ${JSON.stringify(value)}\n}`);
}

describe("a policy file that repeats a key", () => {
  it("stops the policies folder from loading, naming the file and the key", async () => {
    const folder = await mkdtemp(join(tmpdir(), "policies-"));
    await writeFile(join(folder, "ticket-routing.v1.json"), await repeating("autoThreshold", 0.5));
    await expect(PolicyRegistry.fromFolder(folder)).rejects.toThrow(
      /ticket-routing\.v1\.json: autoThreshold: duplicate key "autoThreshold" in the same object/,
    );
  });

  it("is refused as a proposal, and as a what-if candidate, with the key named", async () => {
    const folder = await mkdtemp(join(tmpdir(), "policies-"));
    await copyFile(POLICY, join(folder, "ticket-routing.v1.json"));
    const current = JSON.parse(await readFile(POLICY, "utf8")) as { version: number };
    const proposal = join(folder, "..", `proposal-${Date.now()}.json`);
    await writeFile(proposal, await repeating("temperature", 3, current.version + 1));
    await expect(applyProposal(proposal, folder)).rejects.toThrow(/temperature: duplicate key "temperature"/);
    const whatIf = await runDecide(["what-if", "--candidate", proposal, "--from-table", "decisions"]);
    expect(whatIf.code).toBe(2);
    expect(whatIf.stderr).toMatch(
      /--candidate .* is not a valid policy: .*temperature: duplicate key "temperature"/,
    );
    expect(whatIf.stderr).not.toMatch(/at .*\.(ts|js):\d+/);
  });
});

describe("a proposal that changes nothing", () => {
  it("is not applied as a new version (issue 36, observation 7)", async () => {
    const folder = await mkdtemp(join(tmpdir(), "policies-"));
    await copyFile(POLICY, join(folder, "ticket-routing.v1.json"));
    const current = JSON.parse(await readFile(POLICY, "utf8")) as { version: number };
    const same = join(folder, "..", `same-${Date.now()}.json`);
    await writeFile(same, JSON.stringify({ ...current, version: current.version + 1 }));
    await expect(applyProposal(same, folder)).rejects.toThrow(
      /changes nothing the decisions use: ticket-routing stays at version 1, nothing written/,
    );
    const stamped = join(folder, "..", `stamped-${Date.now()}.json`);
    await writeFile(
      stamped,
      JSON.stringify({ ...current, version: current.version + 1, calibratedAt: "2026-12-01T00:00:00.000Z" }),
    );
    await expect(applyProposal(stamped, folder)).rejects.toThrow(/\(only calibratedAt\)/);
    const registry = await PolicyRegistry.fromFolder(folder);
    expect(registry.current("ticket-routing")?.version).toBe(current.version);
  });
});

/**
 * The policies the pipeline knows: every version of every policy, loaded once. Items name a
 * policy id; the latest version decides, and records keep which one it was. A version marked
 * `candidate` never decides: it is there to be scored in the shadow of the live one.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type Policy, PolicyError, parsePolicyText, policyKey } from "./policy.ts";

/** An immutable set of policy versions. */
export class PolicyRegistry {
  private readonly latest = new Map<string, Policy>();
  private readonly versions = new Map<string, Policy>();

  constructor(policies: readonly Policy[]) {
    for (const policy of policies) {
      const key = policyKey(policy);
      if (this.versions.has(key)) throw new PolicyError(`policy ${key} is defined twice`);
      this.versions.set(key, policy);
      if (policy.candidate) continue;
      const current = this.latest.get(policy.id);
      if (!current || current.version < policy.version) this.latest.set(policy.id, policy);
    }
    for (const policy of policies) {
      if (!policy.shadow) continue;
      const shadow = this.versions.get(policyKey({ id: policy.id, version: policy.shadow.version }));
      if (!shadow?.candidate)
        throw new PolicyError(
          `policy ${policyKey(policy)}: shadow version ${policy.shadow.version} ${shadow ? 'is not marked "candidate": true' : "is not defined"}`,
        );
    }
  }

  /** The shadow candidate of `policy` (its `shadow.version`), when it names one. */
  shadowOf(policy: Policy): Policy | undefined {
    return policy.shadow ? this.version(policy.id, policy.shadow.version) : undefined;
  }

  /** Loads every `*.json` file in `folder` (one policy version each). */
  static async fromFolder(folder: string): Promise<PolicyRegistry> {
    const files = (await readdir(folder)).filter((name) => name.endsWith(".json")).sort();
    const policies = await Promise.all(
      files.map(async (name) => {
        const path = join(folder, name);
        return parsePolicyText(await readFile(path, "utf8"), path);
      }),
    );
    return new PolicyRegistry(policies);
  }

  /** The latest version of policy `id`, or undefined. */
  current(id: string): Policy | undefined {
    return this.latest.get(id);
  }

  /** One exact version, or undefined. */
  version(id: string, version: number): Policy | undefined {
    return this.versions.get(`${id}@${version}`);
  }

  /** Ids of all known policies. */
  ids(): string[] {
    return [...this.latest.keys()].sort();
  }
}

/**
 * The policies the pipeline knows: every version of every policy, loaded once. Items name a
 * policy id; the latest version decides, and records keep which one it was.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type Policy, PolicyError, parsePolicy, policyKey } from "./policy.ts";

/** An immutable set of policy versions. */
export class PolicyRegistry {
  private readonly latest = new Map<string, Policy>();
  private readonly versions = new Map<string, Policy>();

  constructor(policies: readonly Policy[]) {
    for (const policy of policies) {
      const key = policyKey(policy);
      if (this.versions.has(key)) throw new PolicyError(`policy ${key} is defined twice`);
      this.versions.set(key, policy);
      const current = this.latest.get(policy.id);
      if (!current || current.version < policy.version) this.latest.set(policy.id, policy);
    }
  }

  /** Loads every `*.json` file in `folder` (one policy version each). */
  static async fromFolder(folder: string): Promise<PolicyRegistry> {
    const files = (await readdir(folder)).filter((name) => name.endsWith(".json")).sort();
    const policies = await Promise.all(
      files.map(async (name) => {
        const path = join(folder, name);
        let json: unknown;
        try {
          json = JSON.parse(await readFile(path, "utf8"));
        } catch (error) {
          throw new PolicyError(`${path}: not valid JSON (${(error as Error).message})`);
        }
        return parsePolicy(json, path);
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

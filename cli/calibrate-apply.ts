/**
 * `decide calibrate --apply-proposal FILE`: the explicit step that turns a reviewed proposal into
 * a policy file (then deploy, or restart the local mode, to serve it). It takes only what
 * calibration owns: a proposal that differs from the current version in anything else (question,
 * options, routing, audit settings), or holds a calibration field outside its documented range,
 * is refused with the field named. What it writes it prints, field by field.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { checkProposal } from "../shared/domain/calibration/proposal-check.ts";
import { type Policy, PolicyError, parsePolicyText } from "../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { UsageError } from "./args.ts";
import { changeLines } from "./calibrate-print.ts";
import type { Printed } from "./command.ts";
import { cannotRead } from "./input-file.ts";

/** The file written, and the versions it went from and to. */
export interface Applied {
  readonly target: string;
  readonly current: Policy;
  readonly proposed: Policy;
}

/**
 * Writes a proposed policy into the policies folder as `<id>.v<N>.json`, after checking that it
 * is a valid policy, the next version of one the folder holds, and changes only calibration
 * fields within their ranges, at least one that the decisions use; never over an existing file.
 */
export async function applyProposal(file: string, policiesDir: string): Promise<Applied> {
  const registry = await PolicyRegistry.fromFolder(policiesDir);
  const text = await readFile(file, "utf8").catch((error: unknown) => {
    throw cannotRead(`--apply-proposal ${file}`, error);
  });
  let proposed: Policy;
  try {
    proposed = parsePolicyText(text, file);
  } catch (error) {
    if (error instanceof PolicyError || error instanceof SyntaxError)
      throw new UsageError(`${file} is not a valid policy: ${error.message}`);
    throw error;
  }
  const current = registry.current(proposed.id);
  if (!current) throw new UsageError(`${file}: policy "${proposed.id}" is not in ${policiesDir}`);
  if (proposed.version !== current.version + 1)
    throw new UsageError(
      `${file} proposes version ${proposed.version} of ${proposed.id}, but ${policiesDir} is at version ${current.version}: only version ${current.version + 1} applies`,
    );
  const { changes, refusals } = checkProposal(current, proposed);
  if (refusals.length > 0) throw new UsageError(`${file} cannot be applied: ${refusals.join("; ")}`);
  // A version that decides exactly as the current one would only make the record's version lie.
  if (changes.every((change) => change.field === "calibratedAt"))
    throw new UsageError(
      `${file} changes nothing the decisions use${changes.length ? " (only calibratedAt)" : ""}: ${proposed.id} stays at version ${current.version}, nothing written`,
    );
  const target = join(policiesDir, `${proposed.id}.v${proposed.version}.json`);
  if (existsSync(target)) throw new UsageError(`${target} exists already; refusing to overwrite it`);
  await writeFile(target, `${JSON.stringify(proposed, null, 2)}\n`);
  return { target, current, proposed };
}

/** What was written and what it changed, field by field. */
export function printApplied({ target, current, proposed }: Applied): Printed {
  return {
    lines: [
      `wrote ${target}: ${proposed.id} version ${current.version} -> ${proposed.version}:`,
      ...changeLines(current, proposed).map((line) => `  ${line}`),
      "Restart `npm start`, or deploy (npx cdk deploy), to decide new items with it.",
    ],
    exitCode: 0,
  };
}

/**
 * The synth script's checks of the function bundles, on bundles written here: an external import
 * of the AWS SDK is found where esbuild writes one and not in the SDK's own comments or its
 * optional require; a bundle that throws while loading, or exports no handler, is named with why.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  bundlesThatDoNotLoad,
  type FunctionBundle,
  importsTheSdkFromTheRuntime,
} from "../../infra/scripts/bundle-checks.ts";

const root = mkdtempSync(join(tmpdir(), "bundle-checks-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A bundle folder holding `code` as its index.mjs. */
function bundle(id: string, code: string, env: Record<string, string> = {}): FunctionBundle {
  const dir = join(root, id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "index.mjs"), code);
  return { id, dir, code, env };
}

describe("function bundle checks", () => {
  it("finds an AWS SDK import left to the runtime, not the SDK's comments or its optional require", () => {
    const check = (code: string) => importsTheSdkFromTheRuntime({ id: "x", dir: root, code, env: {} });
    expect(check('import { SQSClient } from "@aws-sdk/client-sqs";\nexport const handler = 1;')).toBe(true);
    expect(check('const m = await import("@aws-sdk/client-s3");')).toBe(true);
    expect(check("/**\n * import { S3Client } from '@aws-sdk/client-s3';\n */")).toBe(false);
    expect(check('try { require("@aws-sdk/signature-v4-crt"); } catch {}')).toBe(false);
    expect(check('import { z } from "zod";')).toBe(false);
  });

  it("names a bundle that throws while loading or exports no handler, and passes one that loads", async () => {
    const broken = await bundlesThatDoNotLoad([
      bundle("Loads", "export const handler = async () => ({ ok: process.env.NEEDED });", { NEEDED: "yes" }),
      bundle(
        "Throws",
        'if (!process.env.MISSING) throw new Error("MISSING is required");\nexport const handler = () => 1;',
      ),
      bundle("NoHandler", "export const other = () => 1;"),
    ]);
    expect(broken).toHaveLength(2);
    expect(broken[0]).toMatch(/^Throws: .*MISSING is required/);
    expect(broken[1]).toMatch(/^NoHandler: exports no handler function/);
  }, 60_000);
});

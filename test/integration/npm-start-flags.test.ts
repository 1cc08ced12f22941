/**
 * `npm start --port-base 28000` without `--`: npm keeps the flag and passes only `28000`. Before,
 * that answered `unexpected argument "28000"` with no hint; now it names the flag npm kept and the
 * command that passes it. Run through npm itself, as a person types it.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { npmTookFlags } from "../../cli/npm-flags.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const run = promisify(execFile);

describe("flags given to npm start without --", () => {
  it("names the flag npm kept and the command that passes it", async () => {
    const result = await run("npm", ["start", "--silent", "--port-base", "28000"], { cwd: REPO_ROOT }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'decide local: npm kept --port-base for itself: flags before "--" are npm\'s; run npm start -- --port-base 28000',
    );
  });

  it("puts a boolean flag back without a value, and does nothing outside npm", () => {
    const flags = { fresh: { type: "boolean" }, "port-base": { type: "string" } } as const;
    const npm = { npm_lifecycle_event: "start", npm_config_fresh: "true", npm_config_port_base: "true" };
    expect(npmTookFlags(flags, ["9000"], npm)?.message).toContain(
      "run npm start -- --fresh --port-base 9000",
    );
    expect(npmTookFlags(flags, ["9000"], { npm_config_fresh: "true" })).toBeUndefined();
    expect(npmTookFlags(flags, [], { npm_lifecycle_event: "start" })).toBeUndefined();
  });
});

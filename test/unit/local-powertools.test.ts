/**
 * The local mode keeps the functions' Powertools logging quiet for the whole process, but a
 * setting the person made wins. (When the local wiring stopped copying its environment into
 * process.env, the quiet settings went with it and every function's INFO logs and EMF lines
 * filled `npm start`'s terminal; test/integration/local-cli.test.ts checks the terminal.)
 */
import { describe, expect, it } from "vitest";
import { LOCAL_POWERTOOLS, quietPowertools } from "../../infra/local/stand-ins.ts";

describe("quietPowertools", () => {
  it("fills in the quiet settings and keeps a value already set", () => {
    const env: NodeJS.ProcessEnv = { POWERTOOLS_LOG_LEVEL: "DEBUG" };
    quietPowertools(env);
    expect(env).toEqual({ ...LOCAL_POWERTOOLS, POWERTOOLS_LOG_LEVEL: "DEBUG" });
    expect(LOCAL_POWERTOOLS.POWERTOOLS_METRICS_DISABLED).toBe("true");
  });
});

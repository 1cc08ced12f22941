/**
 * A demo model's fit, run as `decide make-model --shape demo` (or `demo-large`) in a child
 * process for the local mode: the fit is tens of seconds of computation that would hold the local mode's event loop,
 * and with it the progress `npm start` shows while it starts.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { DemoModelInputs } from "../../endpoint/models/demo-file.ts";
import type { DemoModelName } from "../../endpoint/models/demo-models.ts";

/** Fits the demo model `name` on `inputs` into `out` with the checkout's `decide` at `root`. */
export async function fitInChild(
  root: string,
  out: string,
  inputs: DemoModelInputs,
  name: DemoModelName = "demo",
): Promise<void> {
  const args = ["make-model", "--shape", name, "--out", out, "--training", inputs.training];
  if (inputs.templates) args.push("--templates", inputs.templates);
  const child = spawn(
    process.execPath,
    [join(root, "bin", "decide.js"), ...args, "--policies-dir", inputs.policiesDir],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0)
    throw new Error(`the demo model ${name} could not be fitted (exit ${code}): ${stderr.slice(-500)}`);
}

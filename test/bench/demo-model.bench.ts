/**
 * `npm run bench:demo`: fits the demo model from the committed training set and prints how it
 * handles the held-back items (events/items/demo-heldout.jsonl), per policy. docs/getting-started.md quotes
 * these figures.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDemoInputs, ensureDemoModel } from "../../endpoint/models/demo-file.ts";
import { demoFigures, scoreHeldOut } from "../helpers/demo-evaluation.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const dir = await mkdtemp(join(tmpdir(), "demo-bench-"));
try {
  const started = performance.now();
  const path = await ensureDemoModel(dir, defaultDemoInputs(REPO_ROOT));
  console.log(`fitted and wrote the demo model in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const results = await scoreHeldOut(path);
  if (process.argv.includes("--verbose"))
    for (const r of results)
      console.log(
        `${r.policy}\t${r.label}\t${r.clear ? "clear" : "ambiguous"}\t${r.chosen}\t${r.top.toFixed(2)}\t${r.route}`,
      );
  console.log(
    "policy              clear handled  clear automated&right  ambiguous escalated  wrong automated",
  );
  for (const f of demoFigures(results)) {
    const share = (n: number, of: number) => `${n}/${of} (${of ? Math.round((100 * n) / of) : 0}%)`;
    console.log(
      `${f.policy.padEnd(20)}${share(f.clearHandled, f.clear).padEnd(15)}${share(f.clearAutomatedRight, f.clear).padEnd(23)}${share(f.ambiguousEscalated, f.ambiguous).padEnd(21)}${f.wrongAutomated}`,
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

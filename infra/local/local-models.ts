/**
 * The models the local endpoint serves: the first (given, or the demo model) and the later tiers
 * the sample policies' cascades ask for, which are demo models too (`demo-large`).
 */
import { join } from "node:path";
import { type DemoModelInputs, defaultDemoInputs, ensureDemoModel } from "../../endpoint/models/demo-file.ts";
import { DEMO_MODELS, type DemoModelName } from "../../endpoint/models/demo-models.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { fitInChild } from "./demo-fit-child.ts";

/**
 * The first model (the given one, else the demo model) and the model of every later tier the
 * policies' cascades name, each a demo model fitted on first use. The demo models depend on the
 * checkout alone, so they are kept in one folder for every data folder (.cache/demo-models unless
 * `modelsDir` says otherwise).
 */
export async function localModels(
  options: {
    readonly root: string;
    readonly model?: string | undefined;
    readonly modelsDir?: string | undefined;
  },
  say: (line: string) => void,
): Promise<{ first: string; tiers: { name: string; path: string }[] }> {
  const dir = options.modelsDir ?? join(options.root, ".cache", "demo-models");
  const inputs = defaultDemoInputs(options.root);
  // In a child process: the fit is tens of seconds that would hold the event loop, and with it the
  // progress npm start shows.
  const fit = (out: string, at: DemoModelInputs, name: DemoModelName) =>
    fitInChild(options.root, out, at, name);
  const fitting = (name: DemoModelName) => () =>
    say(`demo model: fitting ${name}'s word evidence to the sample policies (first start only)...`);
  let first = options.model;
  if (!first) {
    first = await ensureDemoModel(dir, inputs, fitting("demo"), { write: fit });
    say(`demo model: ${first} (a computed bag-of-words model for the sample policies, not a language model)`);
  }
  const tiers: { name: string; path: string }[] = [];
  for (const name of cascadeModels(await PolicyRegistry.fromFolder(inputs.policiesDir))) {
    if (!Object.hasOwn(DEMO_MODELS, name))
      throw new Error(
        `a policy's cascade asks for the model "${name}", which the local mode cannot serve (it serves the demo models: ${Object.keys(DEMO_MODELS).join(", ")})`,
      );
    const path = await ensureDemoModel(dir, inputs, fitting(name as DemoModelName), {
      name: name as DemoModelName,
      write: fit,
    });
    say(`demo model: ${path} (served as "${name}", a later tier of a cascade)`);
    tiers.push({ name, path });
  }
  return { first, tiers };
}

/** The models the policies' cascades ask after their first, each once. */
function cascadeModels(policies: PolicyRegistry): string[] {
  const names = policies
    .ids()
    .flatMap((id) => policies.current(id)?.cascade?.map((tier) => tier.model) ?? []);
  return [...new Set(names)];
}

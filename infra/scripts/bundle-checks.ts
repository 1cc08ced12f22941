/**
 * Checks of the Lambda functions' bundles in a synthesized cloud assembly, for `npm run synth`:
 * the tests synthesize without bundling, so only here is the code that would be deployed read.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

/** One function's bundle: its logical id, its folder in the assembly, its environment. */
export interface FunctionBundle {
  readonly id: string;
  readonly dir: string;
  readonly code: string;
  /** The function's variables; a value the template resolves at deploy (a Ref) is a placeholder. */
  readonly env: Record<string, string>;
}

type Resource = { Type: string; Metadata?: Record<string, unknown>; Properties?: Record<string, unknown> };

/** The bundled functions (an `index.mjs` in their asset folder) of every template in `out`. */
export async function functionBundles(out: string): Promise<FunctionBundle[]> {
  const found: FunctionBundle[] = [];
  for (const file of (await readdir(out)).filter((f) => f.endsWith(".template.json"))) {
    const template = JSON.parse(await readFile(join(out, file), "utf8")) as {
      Resources?: Record<string, Resource>;
    };
    for (const [id, resource] of Object.entries(template.Resources ?? {})) {
      const asset = resource.Metadata?.["aws:asset:path"];
      if (resource.Type !== "AWS::Lambda::Function" || typeof asset !== "string") continue;
      const dir = resolve(out, asset);
      const code = await readFile(join(dir, "index.mjs"), "utf8").catch(() => undefined);
      if (code === undefined) continue;
      const variables = ((resource.Properties?.Environment as { Variables?: Record<string, unknown> })
        ?.Variables ?? {}) as Record<string, unknown>;
      const env = Object.fromEntries(
        Object.entries(variables).map(([name, value]) => [
          name,
          typeof value === "string" ? value : placeholderFor(name, value, template.Resources ?? {}),
        ]),
      );
      found.push({ id, dir, code, env });
    }
  }
  return found;
}

/**
 * A value of the right shape for a variable the template resolves at deploy: some modules check
 * a value's form when they load (a Cognito user pool id is `<region>_<id>`, a domain a URL).
 */
function placeholderFor(name: string, value: unknown, resources: Record<string, Resource>): string {
  const ref = (value as { Ref?: string }).Ref;
  const type = ref ? resources[ref]?.Type : undefined;
  if (type === "AWS::Cognito::UserPool") return "us-east-1_SynthCheck";
  if ((value as { "Fn::Join"?: unknown })["Fn::Join"] && /DOMAIN|URL/.test(name))
    return "https://synth-check.example.com";
  return `synth-check-${name.toLowerCase()}`;
}

/** An import of the AWS SDK left external, as esbuild writes one. */
const EXTERNAL_SDK_IMPORT = /^(?:import|export)\b[^;\n]*\bfrom\s*"@aws-sdk\/|\bimport\(\s*"@aws-sdk\//m;

/**
 * Whether the bundle (an ES module) imports an `@aws-sdk/` module from the runtime: an import
 * statement at the start of a line (the SDK's doc comments quote such imports after a `*`) or a
 * dynamic import. The SDK's own optional require of `@aws-sdk/signature-v4-crt`, inside a try,
 * stays: nothing here signs with SigV4a.
 */
export const importsTheSdkFromTheRuntime = (bundle: FunctionBundle): boolean =>
  EXTERNAL_SDK_IMPORT.test(bundle.code);

/**
 * "id: reason" for each bundle that does not load under Node with its environment (and a region
 * and placeholder credentials, as Lambda gives) or does not export a `handler` function. Each
 * loads in a process of its own; nothing is invoked, so nothing is called.
 */
export async function bundlesThatDoNotLoad(bundles: readonly FunctionBundle[]): Promise<string[]> {
  const run = promisify(execFile);
  const broken: string[] = [];
  for (const bundle of bundles) {
    const url = pathToFileURL(join(bundle.dir, "index.mjs")).href;
    const script = `const m = await import(${JSON.stringify(url)}); if (typeof m.handler !== "function") { console.error("exports no handler function"); process.exit(3); }`;
    try {
      await run(process.execPath, ["--input-type=module", "-e", script], {
        cwd: bundle.dir,
        timeout: 60_000,
        env: {
          PATH: process.env.PATH ?? "",
          AWS_REGION: "us-east-1",
          AWS_ACCESS_KEY_ID: "synth-check",
          AWS_SECRET_ACCESS_KEY: "synth-check",
          ...bundle.env,
        },
      });
    } catch (error) {
      const { stderr, message } = error as { stderr?: string; message: string };
      const lines = (stderr ?? message).trim().split("\n");
      broken.push(`${bundle.id}: ${lines.find((l) => /Error|exports no handler/.test(l)) ?? lines.at(-1)}`);
    }
  }
  return broken;
}

/**
 * `npm run synth`: synthesizes the app and prints only what needs reading: findings (cdk-nag
 * errors and warnings, synthesis errors) and where the template went. Two kinds of line are
 * dropped: the "Bundling asset ..." progress lines of the seven function bundles, and the CLI's
 * advice that some feature flags keep their default (the flags this app depends on are set in
 * cdk.json; `npx cdk flags --unstable=flags` lists the rest). Then cfn-lint checks the template
 * (`npm run lint:template`). Arguments go to cdk (`npm run synth -- -c endpointMode=serverless`).
 * Before that it checks that no function bundle imports the AWS SDK from the runtime (the SDK is
 * bundled at the pinned version: `infra/constructs/pipeline-function.ts`).
 * The exit code is cdk's, else the bundle check's, else cfn-lint's.
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";

const NOISE = [/^Bundling asset /, /feature flags are not configured/];
/** An import of the AWS SDK left external, as esbuild writes one (see bundlesImportingTheSdk). */
const EXTERNAL_SDK_IMPORT = /^(?:import|export)\b[^;\n]*\bfrom\s*"@aws-sdk\/|\bimport\(\s*"@aws-sdk\//m;

const child = spawn("npx", ["cdk", "synth", "--quiet", "--no-notices", ...process.argv.slice(2)], {
  stdio: ["ignore", "pipe", "pipe"],
  env: { ...process.env, FORCE_COLOR: "0" },
});
const forward = (stream: NodeJS.ReadableStream, write: (line: string) => void) =>
  new Promise<void>((resolve) => {
    const lines = createInterface({ input: stream });
    lines.on("line", (line) => {
      if (!NOISE.some((pattern) => pattern.test(line))) write(line);
    });
    lines.on("close", resolve);
  });
const [code] = await Promise.all([
  new Promise<number>((resolve) => child.on("close", (status) => resolve(status ?? 1))),
  forward(child.stdout, (line) => console.log(line)),
  forward(child.stderr, (line) => console.error(line)),
]);
if (code === 0) {
  for (const file of (await readdir("cdk.out")).filter((f) => f.endsWith(".template.json"))) {
    const template = JSON.parse(await readFile(join("cdk.out", file), "utf8")) as { Resources?: object };
    console.log(`synthesized cdk.out/${file} (${Object.keys(template.Resources ?? {}).length} resources)`);
  }
}
if (code !== 0) process.exit(code);
const runtimeImports = await bundlesImportingTheSdk("cdk.out");
if (runtimeImports.length > 0) {
  console.error(
    `synth: these function bundles import the AWS SDK from the Lambda runtime instead of bundling the pinned version: ${runtimeImports.join(", ")}`,
  );
  process.exit(1);
}
const lint = spawn("npm", ["run", "--silent", "lint:template"], { stdio: "inherit" });
process.exitCode = await new Promise<number>((resolve) => lint.on("close", (status) => resolve(status ?? 1)));

/**
 * The Lambda functions whose bundle (an ES module) imports `@aws-sdk/...` as an external module:
 * an import statement at the start of a line (as esbuild writes them; the SDK's doc comments
 * quote such imports after a `*`) or a dynamic import of an `@aws-sdk/` module. The SDK's own
 * optional require of `@aws-sdk/signature-v4-crt`, inside a try, stays: it is not used here.
 */
async function bundlesImportingTheSdk(out: string): Promise<string[]> {
  const found: string[] = [];
  for (const file of (await readdir(out)).filter((f) => f.endsWith(".template.json"))) {
    const template = JSON.parse(await readFile(join(out, file), "utf8")) as {
      Resources?: Record<string, { Type: string; Metadata?: Record<string, unknown> }>;
    };
    for (const [id, resource] of Object.entries(template.Resources ?? {})) {
      const asset = resource.Metadata?.["aws:asset:path"];
      if (resource.Type !== "AWS::Lambda::Function" || typeof asset !== "string") continue;
      const code = await readFile(join(out, asset, "index.mjs"), "utf8").catch(() => "");
      if (EXTERNAL_SDK_IMPORT.test(code)) found.push(id);
    }
  }
  return found;
}

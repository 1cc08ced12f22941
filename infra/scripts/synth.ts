/**
 * `npm run synth`: synthesizes the app and prints only what needs reading: findings (cdk-nag
 * errors and warnings, synthesis errors) and where the template went. Two kinds of line are
 * shortened or dropped: the "Bundling asset ..." lines of the function bundles (one short line
 * each on stderr instead, `synth-progress.ts`: the bundling is most of the wait), and the CLI's
 * advice that some feature flags keep their default (the flags this app depends on are set in
 * cdk.json; `npx cdk flags --unstable=flags` lists the rest). Then cfn-lint checks the template
 * (`npm run lint:template`). Arguments go to cdk (`npm run synth -- -c endpointMode=serverless`).
 * Before that it checks the function bundles (`bundle-checks.ts`): none imports the AWS SDK from
 * the runtime (it is bundled at the pinned version: `infra/constructs/pipeline-function.ts`), and
 * each loads under Node and exports its handler. The exit code is cdk's, else the bundle
 * checks', else cfn-lint's.
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { bundlesThatDoNotLoad, functionBundles, importsTheSdkFromTheRuntime } from "./bundle-checks.ts";
import { bundlingProgress } from "./synth-progress.ts";

const NOISE = [/^Bundling asset /, /feature flags are not configured/];
let bundled = 0;
console.error("synth: cdk synth (bundles every function, then synthesizes the stack: a few minutes)");
const child = spawn("npx", ["cdk", "synth", "--quiet", "--no-notices", ...process.argv.slice(2)], {
  stdio: ["ignore", "pipe", "pipe"],
  env: { ...process.env, FORCE_COLOR: "0" },
});
const forward = (stream: NodeJS.ReadableStream, write: (line: string) => void) =>
  new Promise<void>((resolve) => {
    const lines = createInterface({ input: stream });
    lines.on("line", (line) => {
      const progress = bundlingProgress(line, bundled + 1);
      if (progress !== undefined) {
        bundled++;
        console.error(progress);
      } else if (!NOISE.some((pattern) => pattern.test(line))) write(line);
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
console.error("synth: checking that each function bundle loads");
const bundles = await functionBundles("cdk.out");
const runtimeImports = bundles.filter(importsTheSdkFromTheRuntime).map((b) => b.id);
if (runtimeImports.length > 0) {
  console.error(
    `synth: these function bundles import the AWS SDK from the Lambda runtime instead of bundling the pinned version: ${runtimeImports.join(", ")}`,
  );
  process.exit(1);
}
const broken = await bundlesThatDoNotLoad(bundles);
if (broken.length > 0) {
  console.error(`synth: these function bundles do not load:\n${broken.join("\n")}`);
  process.exit(1);
}
console.log(
  `bundles: ${bundles.length} function bundles load and export their handler; none takes the AWS SDK from the runtime`,
);
console.error("synth: cfn-lint on the template");
const lint = spawn("npm", ["run", "--silent", "lint:template"], { stdio: "inherit" });
process.exitCode = await new Promise<number>((resolve) => lint.on("close", (status) => resolve(status ?? 1)));

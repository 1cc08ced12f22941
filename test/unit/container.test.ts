/**
 * The container files checked against the code: no Docker engine runs here, so the facts that
 * make SageMaker work (port, host, model folder, the `serve` argument, a non-root user) are read
 * from the Dockerfiles and fed to the real configuration resolver.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveServerConfig } from "../../endpoint/server/config.ts";
import { REPO_ROOT } from "../helpers/models.ts";

/** The ENV of a Dockerfile's final stage. */
function finalStageEnv(dockerfile: string): Record<string, string> {
  const finalStage = dockerfile.split(/^FROM /m).at(-1)!;
  const env: Record<string, string> = {};
  for (const match of finalStage.replace(/\\\n/g, " ").matchAll(/^ENV (.+)$/gm)) {
    for (const pair of match[1]!.matchAll(/(\w+)=(\S+)/g)) env[pair[1]!] = pair[2]!;
  }
  return env;
}

for (const [file, gpu] of [
  ["Dockerfile", "off"],
  ["Dockerfile.gpu", "auto"],
] as const) {
  describe(`endpoint/${file}`, async () => {
    const text = await readFile(join(REPO_ROOT, "endpoint", file), "utf8");
    const finalStage = text.split(/^FROM /m).at(-1)!;

    it("listens on 0.0.0.0:8080 and serves the model SageMaker mounts at /opt/ml/model", () => {
      const config = resolveServerConfig({}, finalStageEnv(text));
      expect(config.port).toBe(8080);
      expect(config.host).toBe("0.0.0.0");
      expect(config.model).toBe("/opt/ml/model");
      expect(config.gpu).toBe(gpu);
      expect(finalStage).toMatch(/^EXPOSE 8080$/m);
    });

    it("runs `decide serve` (SageMaker passes `serve`) as a non-root user", () => {
      expect(finalStage).toMatch(/^ENTRYPOINT \["node", "bin\/decide\.js"\]$/m);
      expect(finalStage).toMatch(/^CMD \["serve"\]$/m);
      const user = /^USER (\S+)$/m.exec(finalStage)?.[1];
      expect(user).toBeDefined();
      expect(user).not.toBe("root");
    });

    it("copies every folder the runtime imports from", async () => {
      const { readdir } = await import("node:fs/promises");
      const imports = new Set<string>();
      for (const dir of ["cli", "endpoint", "shared"]) {
        for (const entry of await readdir(join(REPO_ROOT, dir), { recursive: true })) {
          if (!entry.endsWith(".ts")) continue;
          const source = await readFile(join(REPO_ROOT, dir, entry), "utf8");
          for (const m of source.matchAll(/from "(\.\.?\/[^"]+)"/g)) {
            const target = join(dir, entry, "..", m[1]!).split("/")[0]!;
            imports.add(target);
          }
        }
      }
      for (const folder of imports)
        expect(finalStage).toMatch(new RegExp(`^COPY ${folder} \\./${folder}$`, "m"));
    });
  });
}

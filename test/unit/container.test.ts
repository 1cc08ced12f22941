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

    it("builds on a supported Node LTS (22 or newer; Node 20 is past end of life)", () => {
      const versions = [...text.matchAll(/^FROM node:(\d+)/gm)].map((m) => Number(m[1]));
      expect(versions.length).toBeGreaterThan(0);
      for (const version of versions) expect(version).toBeGreaterThanOrEqual(22);
    });

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

    it("copies every folder that `decide serve` loads", async () => {
      // Walk the static imports from the entry the container runs (commands load lazily).
      const seen = new Set<string>();
      const folders = new Set<string>();
      const walk = async (file: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        folders.add(file.split("/")[0]!);
        const source = await readFile(join(REPO_ROOT, file), "utf8");
        for (const m of source.matchAll(/^(?:import|export)[^;]*? from "(\.\.?\/[^"]+)"/gm)) {
          await walk(join(file, "..", m[1]!));
        }
      };
      await walk("cli/main.ts");
      await walk("cli/serve.ts");
      expect(folders).toContain("endpoint");
      for (const folder of folders)
        expect(finalStage).toMatch(new RegExp(`^COPY ${folder} \\./${folder}$`, "m"));
    });
  });
}

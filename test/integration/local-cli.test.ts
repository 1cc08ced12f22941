/**
 * `npm start` as a person sees it in a terminal (`decide local` under a pseudo-terminal made by
 * util-linux `script`): each step is named as it starts, with its time (before, a first start
 * printed nothing for 25 to 55 s); instead of 15 `export` lines to paste it writes an env file
 * and prints one `source` line, and a fresh shell's commands reach it through that file; the live
 * summary is one line redrawn in place, so the review page's address printed above it stays on
 * screen, and Ctrl-C stops it on a line of its own and removes the file. Skips, saying so, where
 * `script` is not installed.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ensurePortsFree, resolveLocalPorts } from "../../infra/local/ports.ts";
import { DECIDE, runDecide } from "../helpers/decide-cli.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { demoLargeModelPath, REPO_ROOT } from "../helpers/models.ts";
import { PROGRESS_BOUND_TEST_MS, waitForProgress } from "../helpers/progress.ts";

const hasScript = spawnSync("script", ["--version"]).status === 0;
if (!hasScript) console.warn("SKIP local-cli: util-linux `script` is not installed, so no pseudo-terminal");

/** A base port whose five local ports are all free. */
async function freeBase(): Promise<number> {
  for (;;) {
    const base = Math.min(await freePort(), 65_000);
    if (
      await ensurePortsFree(resolveLocalPorts(base)).then(
        () => true,
        () => false,
      )
    )
      return base;
  }
}

describe.skipIf(!hasScript)("npm start in a terminal", () => {
  it(
    "redraws the live summary in place below the review page's address",
    async () => {
      const dataDir = await mkdtemp(join(tmpdir(), "local-cli-"));
      const base = await freeBase();
      // `script` runs the command through $SHELL -c; `exec` makes node the terminal's foreground
      // process itself, so Ctrl-C reaches node alone. Without it dash (/bin/sh, CI's shell when
      // SHELL is unset) stays as node's parent, dies of the SIGINT and `script` reports 130.
      // A models folder of its own, so that the demo model is fitted here (its progress is asserted
      // below); demo-large, the moderation policy's second tier, is copied in already fitted.
      const modelsDir = join(dataDir, "models");
      await mkdir(modelsDir);
      const large = await demoLargeModelPath();
      await copyFile(large, join(modelsDir, basename(large)));
      const command = `exec ${process.execPath} ${DECIDE} local --port-base ${base} --data-dir ${dataDir} --models-dir ${modelsDir}`;
      const child = spawn("script", ["-qfec", command, "/dev/null"], { cwd: REPO_ROOT });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
      });
      const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
      // Started, samples sent, and three summary periods after the first summary.
      const milestones = ["endpoint:", "DynamoDB Local:", "Review page:", "sent 9 sample items"];
      const summaries = () => out.slice(out.indexOf("sent 9 sample items")).split("decided ").length - 1;
      try {
        await waitForProgress(
          "npm start",
          async () => milestones.filter((m) => !out.includes(m)).length + (summaries() > 0 ? 0 : 1),
          { stallSeconds: 180 },
          () => out.slice(-2000),
        );
        await waitForProgress(
          "the first decisions",
          async () => (/decided [1-9]/.test(out) ? 0 : 1),
          { stallSeconds: 180 },
          () => out.slice(-2000),
        );
        // A fresh shell reaches it through the env file alone: no variable of this process.
        const envFile = join(dataDir, "env");
        const fresh = { PATH: process.env.PATH, HOME: process.env.HOME };
        const clean = Object.fromEntries(Object.keys(process.env).map((name) => [name, undefined]));
        const exports = (await readFile(envFile, "utf8")).split("\n").filter((l) => l.startsWith("export "));
        expect(exports).toHaveLength(15);
        const status = await runDecide(["status", "--local-env", envFile], { ...clean, ...fresh });
        expect(status.code, status.stderr).toBe(0);
        expect(status.stdout).toContain("queues:");
        const sourced = spawnSync(
          "bash",
          [
            "-c",
            `source '${envFile}' && ${process.execPath} ${DECIDE} events --detail-type 'Decision Made' --one-line`,
          ],
          {
            cwd: REPO_ROOT,
            env: fresh,
            encoding: "utf8",
          },
        );
        expect(sourced.status, sourced.stderr).toBe(0);
        const made = sourced.stdout
          .split("\n")
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l));
        expect(made.length).toBeGreaterThan(0);
        expect(
          made.every((e) => e["detail-type"] === "Decision Made" && e.source === "decision-pipeline"),
        ).toBe(true);
        // A few more summary periods (every 2 s; an unchanged summary is not drawn again).
        await new Promise((resolve) => setTimeout(resolve, 6500));
        child.stdin.write("\x03"); // Ctrl-C, as the terminal sends it
        expect(await closed).toBe(0);
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      // Each step named as it starts, with its time, before what it became; one source line, no exports.
      expect(out).toMatch(/ {2}0\.\d s {2}starting the local pipeline \(a first start took/);
      const starting = out.indexOf("DynamoDB Local: starting Java...");
      expect(starting).toBeGreaterThan(0);
      expect(out.indexOf("DynamoDB Local: http://127.0.0.1:", starting)).toBeGreaterThan(starting);
      expect(out).toMatch(/\d+\.\d s {2}endpoint: loading the model\.\.\./);
      // The fit (about 8 s on an idle machine) runs in a child process: its step keeps counting.
      // Which count is drawn first depends on the timer's ticks on a busy machine (a CI run saw
      // none at 1 s), so any count will do.
      expect(out).toMatch(/demo model: fitting [^\r\n]*\.\.\. [1-9]\d* s/);
      expect(out).toMatch(/\d+\.\d s {2}review page: http:\/\/127\.0\.0\.1:/);
      expect(out).toMatch(/\d+\.\d s {2}ready: every part answers/);
      expect(out).toContain(`source ${join(dataDir, "env")}`);
      expect(out).not.toMatch(/^export /m);
      expect(existsSync(join(dataDir, "env")), "the env file goes with the run").toBe(false);
      const review = out.indexOf("Review page:");
      const summary = out.indexOf("decided ", out.indexOf("sent 9 sample items"));
      const stopping = out.indexOf("stopping...", summary);
      expect(review).toBeGreaterThan(0);
      expect(summary).toBeGreaterThan(review);
      expect(stopping).toBeGreaterThan(summary);
      // From the first summary to Ctrl-C: redraws only (carriage return, text, erase), no new line.
      expect(out[summary - 1]).toBe("\r");
      const live = out.slice(summary, stopping).replace(/(\^C)?\r\n$/, "");
      expect(live).not.toContain("\n");
      expect(live).toContain("\x1b[K");
      // The functions' JSON logs and EMF metrics stay out of the terminal (Powertools kept quiet).
      expect(out).not.toContain('"_aws"');
      expect(out).not.toContain('"level":"INFO"');
    },
    PROGRESS_BOUND_TEST_MS,
  );
});

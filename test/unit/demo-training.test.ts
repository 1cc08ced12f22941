/**
 * The demo model's training set is generated from templates; the committed file must be exactly
 * what the templates give (regenerate with `npm run demo:training`), and held-back items must
 * never appear in it.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  demoTrainingJsonl,
  evaluationStates,
  expandDemoTemplates,
  readDemoTemplates,
  stateKey,
} from "../../endpoint/models/demo-training.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const items = join(REPO_ROOT, "events", "items");

describe("demo training set", () => {
  it("is the expansion of the committed templates", async () => {
    const rows = expandDemoTemplates(
      await readDemoTemplates(join(items, "demo-templates.json")),
      await evaluationStates(items),
    );
    expect(rows.length).toBeGreaterThan(500);
    expect(await readFile(join(items, "demo-training.jsonl"), "utf8")).toBe(demoTrainingJsonl(rows));
  });

  it("shares no item with the held-back and dev files", async () => {
    const states = (file: string) =>
      readFile(join(items, file), "utf8").then((text) =>
        text
          .split("\n")
          .filter((l) => l.trim())
          .map((l) => JSON.stringify(JSON.parse(l).state).toLowerCase()),
      );
    const training = new Set(await states("demo-training.jsonl"));
    for (const file of ["demo-heldout.jsonl", "demo-dev.jsonl", "demo-dev2.jsonl"])
      expect(
        (await states(file)).filter((s) => training.has(s)),
        file,
      ).toEqual([]);
  });

  it("drops a fill equal to an evaluation item and keeps the other rows as they were", () => {
    const templates = {
      seed: 3,
      fillsPerTemplate: 4,
      slots: { w: ["a", "b"] },
      policies: { p: { x: ["{w}"] } },
    };
    const all = expandDemoTemplates(templates).map((r) => r.state);
    expect(all).toContain("a");
    expect(expandDemoTemplates(templates, new Set([stateKey("A")])).map((r) => r.state)).toEqual(
      all.filter((s) => s !== "a"),
    );
  });

  it("names an unknown slot", () => {
    expect(() =>
      expandDemoTemplates({ seed: 1, fillsPerTemplate: 1, slots: {}, policies: { p: { a: ["{nope}"] } } }),
    ).toThrow("unknown slot {nope}");
  });
});

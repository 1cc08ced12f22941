/**
 * The published contracts: `events/schemas/` holds exactly what the zod schemas generate (run
 * `npm run schemas` after changing one), and the sample events in `events/eventbridge/` and the
 * pipeline's own events fit them.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EVENT_DETAIL_SCHEMAS } from "../../shared/domain/contracts/events.ts";
import { eventJsonSchemas } from "../../shared/domain/contracts/json-schemas.ts";
import { eventFor } from "../../shared/use-cases/record-event.ts";
import { REPO_ROOT } from "../helpers/models.ts";

describe("published event schemas", () => {
  it("are the generated ones, file for file (npm run schemas)", async () => {
    const folder = join(REPO_ROOT, "events", "schemas");
    const generated = eventJsonSchemas();
    expect((await readdir(folder)).sort()).toEqual(generated.map((s) => `${s.name}.json`).sort());
    for (const { name, schema } of generated) {
      expect(JSON.parse(await readFile(join(folder, `${name}.json`), "utf8")), name).toEqual(schema);
    }
  });

  it("accept the sample events and refuse a detail without its event id", async () => {
    const folder = join(REPO_ROOT, "events", "eventbridge");
    for (const file of await readdir(folder)) {
      const event = JSON.parse(await readFile(join(folder, file), "utf8")) as {
        "detail-type": keyof typeof EVENT_DETAIL_SCHEMAS;
        detail: Record<string, unknown>;
      };
      const schema = EVENT_DETAIL_SCHEMAS[event["detail-type"]];
      expect(schema.safeParse(event.detail).error, file).toBeUndefined();
      if ("eventId" in event.detail) {
        const { eventId: _id, ...withoutId } = event.detail;
        expect(schema.safeParse(withoutId).success, file).toBe(false);
      }
    }
  });

  it("accept what the decide path publishes", () => {
    const made = eventFor({
      itemId: "T-1",
      policyId: "tickets",
      policyVersion: 1,
      status: "auto_approved",
      route: "auto",
      reason: "confident",
      chosen: "billing",
      topProbability: 0.9,
      confidence: 0.8,
      distribution: { billing: 0.9, technical: 0.1 },
      modelSha256: "a".repeat(64),
      promptSha256: "b".repeat(64),
      createdAt: "2026-11-30T00:00:00.000Z",
      updatedAt: "2026-11-30T00:00:00.000Z",
      eventPublished: false,
    });
    expect(
      EVENT_DETAIL_SCHEMAS[made.detailType as "Decision Made"].safeParse(made.detail).error,
    ).toBeUndefined();
  });
});

/**
 * JSON Schemas (draft 4, the dialect EventBridge's schema registry takes) generated from the zod
 * schemas of the item and the events: the one source of the contracts published to upstream
 * teams. Event details are read as input (unknown fields allowed, so consumers keep working when
 * a field is added); the item is strict, as the decide function is.
 */
import { z } from "zod";
import { EVENT_SOURCE } from "../events.ts";
import { EVENT_DETAIL_SCHEMAS } from "./events.ts";

/** One published schema: a file name, the detail type it describes and the schema. */
export interface PublishedSchema {
  readonly name: string;
  readonly detailType: string;
  readonly schema: Record<string, unknown>;
}

/** The schema of each event's `detail` (for "Decision Requested": the item). */
export function eventJsonSchemas(): PublishedSchema[] {
  return Object.entries(EVENT_DETAIL_SCHEMAS).map(([detailType, schema]) => ({
    name: detailType.toLowerCase().replace(/\s+/g, "-"),
    detailType,
    schema: {
      title: `${EVENT_SOURCE}: ${detailType}`,
      ...z.toJSONSchema(schema, { target: "draft-4", io: "input", unrepresentable: "any" }),
    },
  }));
}

/**
 * The local mode's live summary (issue 36, observation 6; issue 34, "monotone live counts"): it
 * reread the whole table every 2 s, with passes overlapping, and its counts went backwards after
 * a restart (479 → 489 → 499 → 489). Now one pass at start, then each refresh reads what was
 * decided or labelled since, one refresh at a time, and the totals only grow.
 */
import { describe, expect, it } from "vitest";
import { LiveSummary } from "../../infra/local/local-summary.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { DecisionStore } from "../../shared/domain/decision-store.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const emptyQueue = { depth: async () => ({ visible: 0, inFlight: 0 }) } as unknown as MessageQueue;

function record(i: number, at: Date, route: "auto" | "human" | "rejected"): DecisionRecord {
  const time = at.toISOString();
  return {
    itemId: `item-${i}`,
    policyId: "tickets",
    policyVersion: 1,
    status: route === "auto" ? "auto_approved" : route === "human" ? "pending_review" : "rejected",
    ...(route === "rejected" ? {} : { route, reason: "confident", chosen: "billing" }),
    createdAt: time,
    updatedAt: time,
    eventPublished: true,
  } as DecisionRecord;
}

/** A store that counts the records its reads return. */
function counting(store: DecisionStore): { store: DecisionStore; read: () => number } {
  let read = 0;
  const counted = Object.create(store) as DecisionStore;
  counted.pageDecisions = async (filter, page) => {
    const result = await store.pageDecisions(filter, page);
    read += result.records.length;
    return result;
  };
  return { store: counted, read: () => read };
}

describe("the live summary", () => {
  it("counts the table once at start, then reads only what changed, and never goes back", async () => {
    let now = new Date("2026-12-01T10:00:00.000Z");
    const base = new InMemoryDecisionStore();
    for (let i = 0; i < 1_000; i++)
      await base.create(record(i, new Date(now.getTime() - 3_600_000 + i), i % 3 === 0 ? "human" : "auto"));
    await base.create(record(1_000, new Date(now.getTime() - 3_600_000), "rejected"));
    const { store, read } = counting(base);
    const live = await LiveSummary.start({
      store,
      policies: new PolicyRegistry([TEAMS_POLICY]),
      now: () => now,
      queues: { intake: emptyQueue, deadLetters: emptyQueue },
    });
    const first = await live.summary();
    expect(first).toMatchObject({ decided: 1_000, auto: 666, human: 334, reviewed: 0, rejected: 1 });
    const afterStart = read();
    expect(afterStart).toBe(1_001);

    // Five more decisions, and a label: the next refresh reads those, not the table.
    now = new Date(now.getTime() + 2_000);
    for (let i = 2_000; i < 2_005; i++) await base.create(record(i, new Date(now.getTime() - 500), "auto"));
    await base.writeReview(
      { itemId: "item-0", policyId: "tickets", policyVersion: 1 },
      {
        from: "pending_review",
        to: "reviewed",
        reviewVersion: 0,
        set: { label: "billing", reviewedAt: now.toISOString() },
      },
    );
    const second = await live.summary();
    expect(second).toMatchObject({ decided: 1_005, auto: 671, human: 333, reviewed: 1, rejected: 1 });
    expect(read() - afterStart).toBe(5);

    // Read again within the overlap: the same records are not counted twice.
    now = new Date(now.getTime() + 2_000);
    const third = await live.summary();
    expect(third).toMatchObject({ decided: 1_005, auto: 671, reviewed: 1 });

    // Refreshes asked for together share one pass.
    const before = read();
    const together = await Promise.all([live.summary(), live.summary(), live.summary()]);
    expect(new Set(together).size).toBe(1);
    expect(read() - before).toBe(5);
  });

  it("counts a decision whose write lands after a refresh that began later than its start", async () => {
    let now = new Date("2026-12-01T10:00:00.000Z");
    const store = new InMemoryDecisionStore();
    const live = await LiveSummary.start({
      store,
      policies: new PolicyRegistry([TEAMS_POLICY]),
      now: () => now,
      queues: { intake: emptyQueue, deadLetters: emptyQueue },
    });
    const began = new Date(now.getTime() + 1_000); // the decision starts here...
    now = new Date(now.getTime() + 30_000);
    expect((await live.summary()).decided).toBe(0);
    await store.create(record(1, began, "auto")); // ...and is written after that refresh
    now = new Date(now.getTime() + 2_000);
    const counts: number[] = [];
    for (let i = 0; i < 5; i++) {
      counts.push((await live.summary()).decided);
      now = new Date(now.getTime() + 2_000);
    }
    expect(counts).toEqual([1, 1, 1, 1, 1]);
  });
});

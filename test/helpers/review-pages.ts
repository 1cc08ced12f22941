/**
 * The review pages on the real store for browser tests: DynamoDB Local, the local review server
 * with its sign-in stub, headless Chromium, a record factory and signed-in browser contexts.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { type LocalReviewServer, startLocalReviewServer } from "../../infra/local/review-server.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { launchChromium, signInLocally } from "./browser.ts";
import { freePort } from "./local-pipeline.ts";
import { REPO_ROOT } from "./models.ts";

/** A running set of review pages and a browser to use them with. */
export interface ReviewPages {
  readonly store: DynamoDbDecisionStore;
  readonly server: LocalReviewServer;
  readonly browser: Browser;
  readonly policies: PolicyRegistry;
  /** Events the pages published. */
  readonly events: PipelineEvent[];
  /** Where screenshots go. */
  readonly shots: string;
  /** A browser context signed in as `name` in `group`, at a laptop's width unless told. */
  signedIn(
    name: string,
    group: "reviewers" | "admins",
    viewport?: { width: number; height: number },
  ): Promise<{ context: BrowserContext; page: Page }>;
  /** The page of a record. */
  itemUrl(record: Pick<DecisionRecord, "policyId" | "policyVersion" | "itemId">): string;
  close(): Promise<void>;
}

/** Starts DynamoDB Local, a table named `table`, the review server and Chromium. */
export async function startReviewPages(table: string, pageSize = 3): Promise<ReviewPages> {
  const shots = join(REPO_ROOT, "test-output", "review");
  await mkdir(shots, { recursive: true });
  const dynamo: LocalDynamoDb = await startDynamoDbLocal({ port: await freePort() });
  const started: { server?: LocalReviewServer; browser?: Browser } = {};
  const close = async () => {
    await started.browser?.close();
    await started.server?.close();
    await dynamo.stop();
  };
  try {
    await ensureDecisionsTable(dynamo.endpoint, table);
    const store = new DynamoDbDecisionStore(documentClient(localServiceOptions(dynamo.endpoint)), table);
    const policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"));
    const events: PipelineEvent[] = [];
    const server = await startLocalReviewServer(
      {
        store,
        policies,
        now: () => new Date(),
        publisher: { publish: async (batch) => void events.push(...batch) },
        timings: { claimMs: 5 * 60_000, changeWindowMs: 10 * 60_000 },
        pageSize,
      },
      0,
    );
    started.server = server;
    const browser = await launchChromium();
    started.browser = browser;
    return {
      store,
      server,
      browser,
      policies,
      events,
      shots,
      async signedIn(name, group, viewport = { width: 1280, height: 900 }) {
        const context = await browser.newContext({ viewport });
        const page = await context.newPage();
        await signInLocally(page, server.url, name, group);
        return { context, page };
      },
      itemUrl: (r) => `${server.url}/items/${r.policyId}/${r.policyVersion}/${r.itemId}`,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

let counter = 0;

/** A pending ticket-routing record (below threshold), `ageMinutes` old, with a unique id. */
export function escalatedRecord(ageMinutes: number, overrides: Partial<DecisionRecord> = {}): DecisionRecord {
  counter++;
  const created = new Date(Date.now() - ageMinutes * 60_000).toISOString();
  return {
    itemId: `TICKET-${process.pid}-${9000 + counter}`,
    policyId: "ticket-routing",
    policyVersion: 1,
    status: "pending_review",
    route: "human",
    reason: "below_threshold",
    chosen: "billing",
    topProbability: 0.62,
    distribution: { billing: 0.62, technical: 0.2, account: 0.1, out_of_scope: 0.08 },
    state: { subject: "Refund", body: `I was charged twice (${counter})`, tags: [] },
    createdAt: created,
    updatedAt: created,
    eventPublished: true,
    ...overrides,
  };
}

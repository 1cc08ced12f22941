/**
 * The review pages in headless Chromium, as reviewers use them: signed in through the local
 * sign-in stub (tokens verified like Cognito's), on the real DynamoDB store (DynamoDB Local).
 * Two reviewers cannot work one item at once; labels go in by keyboard only when the item has
 * focus and after Enter; a reviewer changes their own label within the window; an admin undoes
 * someone else's; a cross-site form is refused; bad filters answer 422; the pages fit a laptop
 * and a phone. Screenshots go to test-output/.
 */
import { mkdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalDynamoDb, startDynamoDbLocal } from "../../infra/local/dynamodb-local.ts";
import { type LocalReviewServer, startLocalReviewServer } from "../../infra/local/review-server.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb-admin.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { chromiumAvailable, launchChromium, signInLocally } from "../helpers/browser.ts";
import { freePort } from "../helpers/local-pipeline.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const hasBrowser = chromiumAvailable();
const shots = join(REPO_ROOT, "test-output", "review");

let dynamo: LocalDynamoDb;
let store: DynamoDbDecisionStore;
let server: LocalReviewServer;
let browser: Browser;
let policies: PolicyRegistry;
const events: PipelineEvent[] = [];

let counter = 0;
/** A pending ticket-routing record (below threshold), `ageMinutes` old. */
function escalated(ageMinutes: number, overrides: Partial<DecisionRecord> = {}): DecisionRecord {
  counter++;
  const created = new Date(Date.now() - ageMinutes * 60_000).toISOString();
  return {
    itemId: `TICKET-${9000 + counter}`,
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

async function signedIn(
  name: string,
  group: "reviewers" | "admins",
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await signInLocally(page, server.url, name, group);
  return { context, page };
}

const itemUrl = (r: DecisionRecord) => `${server.url}/items/${r.policyId}/${r.policyVersion}/${r.itemId}`;

beforeAll(async () => {
  if (!hasBrowser) return;
  await mkdir(shots, { recursive: true });
  dynamo = await startDynamoDbLocal({ port: await freePort() });
  await ensureDecisionsTable(dynamo.endpoint, "review-browser");
  store = new DynamoDbDecisionStore(documentClient(localServiceOptions(dynamo.endpoint)), "review-browser");
  policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"));
  server = await startLocalReviewServer(
    {
      store,
      policies,
      publisher: { publish: async (batch) => void events.push(...batch) },
      timings: { claimMs: 5 * 60_000, changeWindowMs: 10 * 60_000 },
      pageSize: 3,
    },
    0,
  );
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await dynamo?.stop();
});

describe.skipIf(!hasBrowser)("review pages in Chromium", () => {
  it("sends a visitor to the local sign-in, marked as local, and shows who is signed in", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(server.url);
    expect(new URL(page.url()).pathname).toBe("/auth/login");
    expect(await page.locator("main").innerText()).toContain("Local mode only");
    await page.getByLabel("Name").fill("Ana");
    await Promise.all([
      page.waitForURL(`${server.url}/`),
      page.getByRole("button", { name: "Sign in" }).click(),
    ]);
    expect(await page.locator("header").innerText()).toContain("Signed in as Ana");
    await context.close();
  });

  it("pages the queue oldest first with the total, and keeps a second reviewer off a claimed item", async () => {
    const records = [escalated(300), escalated(200), escalated(100), escalated(50)];
    for (const r of [...records].reverse()) await store.create(r);
    const ana = await signedIn("Ana", "reviewers");
    const bo = await signedIn("Bo", "reviewers");
    try {
      const heading = await ana.page.locator("h1").innerText();
      const total = Number(/\((\d+) waiting\)/.exec(heading)?.[1]);
      expect(total).toBeGreaterThanOrEqual(4);
      expect(await ana.page.locator("tbody tr").count()).toBe(3);
      await ana.page.getByRole("link", { name: "Next page" }).click();
      expect(await ana.page.locator("tbody tr").count()).toBeGreaterThan(0);
      // Ana opens an item: Bo sees it taken, without answer buttons.
      const target = records[1]!;
      await ana.page.goto(itemUrl(target));
      expect(await ana.page.locator("button[name=label]").count()).toBe(4);
      await bo.page.goto(itemUrl(target));
      expect(await bo.page.locator("[role=status].taken").innerText()).toContain(
        "Ana is reviewing this item",
      );
      expect(await bo.page.locator("button[name=label]").count()).toBe(0);
      await bo.page.goto(server.url);
      expect(await bo.page.locator("body").innerText()).toContain("taken by Ana");
      await bo.page.screenshot({ path: join(shots, "queue-claimed.png"), fullPage: true });
      expect((await store.get(target))?.claim?.reviewerName).toBe("Ana");
    } finally {
      await ana.context.close();
      await bo.context.close();
    }
  });

  it("labels by keyboard only inside the focused item, after Enter, with readable fields and the reason in numbers", async () => {
    const record = escalated(30);
    await store.create(record);
    const { context, page } = await signedIn("Cy", "reviewers");
    try {
      await page.goto(itemUrl(record));
      const body = await page.locator("article").innerText();
      expect(body).toContain(
        "62% for Billing: charges, invoices, refunds, plans and payments, below the 80% threshold",
      );
      expect(await page.locator("dl.fields dt").allInnerTexts()).toEqual(["subject", "body", "tags"]);
      expect(await page.locator(".bar.chosen").innerText()).toContain("model's choice");
      expect(await page.locator("button[name=label]").first().innerText()).toContain("Billing: charges");
      // No item focused: a number key does nothing.
      await page.evaluate("document.activeElement?.blur()");
      await page.keyboard.press("2");
      expect(await page.locator("button[aria-pressed=true]").count()).toBe(0);
      // Focused: 2 arms the second answer, Escape disarms, 2 then Enter stores it.
      await page.locator("article").focus();
      await page.keyboard.press("2");
      expect(await page.locator(".confirm").innerText()).toContain("Press Enter");
      await page.keyboard.press("Escape");
      expect(await page.locator("button[aria-pressed=true]").count()).toBe(0);
      expect((await store.get(record))?.status).toBe("pending_review");
      await page.keyboard.press("2");
      await page.screenshot({ path: join(shots, "item-armed.png"), fullPage: true });
      await Promise.all([page.waitForURL(/\/\?done=/), page.keyboard.press("Enter")]);
      expect(await page.locator(".toast").innerText()).toContain(`Labelled ${record.itemId} as technical`);
      const stored = (await store.get(record))!;
      expect(stored).toMatchObject({ status: "reviewed", label: "technical", reviewer: "Cy" });
      expect(stored.reviewerId).toMatch(/^[0-9a-f]{32}$/);
    } finally {
      await context.close();
    }
  });

  it("lets a reviewer change their own label within the window, undo it from the toast, and an admin undo anyone's", async () => {
    const mine = escalated(20);
    const old = escalated(400, {
      status: "reviewed",
      label: "account",
      reviewer: "Bo",
      reviewerId: "someone-else",
      reviewedAt: new Date(Date.now() - 3_600_000).toISOString(),
      reviewEventPublished: true,
    });
    await store.create(mine);
    await store.create(old);
    const dee = await signedIn("Dee", "reviewers");
    const root = await signedIn("Root", "admins");
    try {
      await dee.page.goto(itemUrl(mine));
      await Promise.all([
        dee.page.waitForURL(/\/\?done=/),
        dee.page.locator("button[name=label]").first().click(),
      ]);
      await dee.page.goto(itemUrl(mine));
      await Promise.all([
        dee.page.waitForURL(/\/\?done=/),
        dee.page.getByRole("button", { name: /Account: login/ }).click(),
      ]);
      expect((await store.get(mine))?.label).toBe("account");
      expect(await dee.page.locator(".toast").innerText()).toContain("as account");
      await Promise.all([
        dee.page.waitForURL(/\/items\//),
        dee.page.locator(".toast").getByRole("button", { name: "Undo" }).click(),
      ]);
      expect((await store.get(mine))?.status).toBe("pending_review");
      expect(await dee.page.locator("article ol").innerText()).toMatch(
        /labelled billing[\s\S]*changed the label to account[\s\S]*undid the label/,
      );
      // Someone else's label: no undo for Dee; the admin may.
      await dee.page.goto(itemUrl(old));
      expect(await dee.page.getByRole("button", { name: /Undo the label/ }).count()).toBe(0);
      await root.page.goto(itemUrl(old));
      await root.page.getByRole("button", { name: /Undo the label/ }).click();
      expect(await store.get(old)).toMatchObject({ status: "pending_review" });
      await root.page.screenshot({ path: join(shots, "admin-undo.png"), fullPage: true });
      const revised = events.filter((e) => e.detailType === "Decision Review Revised").map((e) => e.detail);
      expect(revised).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ itemId: mine.itemId, action: "change", label: "account" }),
          expect.objectContaining({ itemId: mine.itemId, action: "undo", label: null }),
          expect.objectContaining({
            itemId: old.itemId,
            action: "undo",
            previousLabel: "account",
            reviewer: "Root",
          }),
        ]),
      );
    } finally {
      await dee.context.close();
      await root.context.close();
    }
  });

  it("refuses a cross-site form and a forged Origin, storing nothing", async () => {
    const record = escalated(10);
    await store.create(record);
    const { context, page } = await signedIn("Eli", "reviewers");
    // Another site (another origin on loopback) whose page posts a label to the review server.
    const evil: Server = createServer((_, response) => {
      response.setHeader("content-type", "text/html");
      response.end(`<form id="f" method="post" action="${server.url}/reviews">
<input name="itemId" value="${record.itemId}"><input name="policyId" value="${record.policyId}">
<input name="policyVersion" value="1"><input name="label" value="billing"><input name="action" value="label"></form>
<script>document.getElementById("f").submit()</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    try {
      const response = page.waitForResponse((r) => r.url() === `${server.url}/reviews`);
      await page.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`);
      expect([401, 403]).toContain((await response).status());
      const forged = await context.request.post(`${server.url}/reviews`, {
        headers: { origin: "https://evil.example" },
        form: { itemId: record.itemId, policyId: record.policyId, policyVersion: "1", label: "billing" },
      });
      expect(forged.status()).toBe(403);
      expect(await forged.text()).toContain("cross-site request refused: Origin https://evil.example");
      const tokenless = await context.request.post(`${server.url}/reviews`, {
        headers: { origin: server.url },
        form: {
          itemId: record.itemId,
          policyId: record.policyId,
          policyVersion: "1",
          label: "billing",
          csrf: "guess-guess-guess-guess",
        },
      });
      expect(tokenless.status()).toBe(403);
      expect((await store.get(record))?.status).toBe("pending_review");
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()));
      await context.close();
    }
  });

  it("answers bad decision filters with 422, and lays out decisions and the queue at laptop and phone width", async () => {
    const { context, page } = await signedIn("Fay", "reviewers");
    try {
      const bad = await page.goto(`${server.url}/decisions?since=not-a-date&route=sideways`);
      expect(bad?.status()).toBe(422);
      expect(await page.locator("[role=alert]").innerText()).toMatch(
        /route: "sideways" is not one of auto, human[\s\S]*since: "not-a-date" is not a date/,
      );
      const badBatch = await page.goto(`${server.url}/decisions?batch=Batch%201`);
      expect(badBatch?.status()).toBe(422);
      expect(await page.locator("[role=alert]").innerText()).toMatch(/batch: "Batch 1" is not a batch id/);
      // A batch none of these decisions came in: the filter leaves no row.
      const otherBatch = await page.goto(`${server.url}/decisions?batch=b-none-of-these`);
      expect(otherBatch?.status()).toBe(200);
      expect(await page.locator("tbody tr:not(.detail)").count()).toBe(0);
      await page.goto(`${server.url}/decisions`);
      await page.locator("details summary").first().click();
      const overflow = () =>
        page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
      expect(await overflow()).toBeLessThanOrEqual(0);
      expect(await page.locator("tbody tr:not(.detail)").first().innerText()).toContain(
        "below the 80% threshold",
      );
      await page.screenshot({ path: join(shots, "decisions-detail-1280.png"), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(server.url);
      expect(await overflow()).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(shots, "queue-390.png"), fullPage: true });
    } finally {
      await context.close();
    }
  });
});

/**
 * The review pages in headless Chromium, as reviewers use them: signed in through the local
 * sign-in stub (tokens verified like Cognito's), on the real DynamoDB store (DynamoDB Local).
 * Two reviewers cannot work one item at once; labels go in by keyboard only when the item has
 * focus and after Enter; a reviewer changes their own label within the window; an admin undoes
 * someone else's; a cross-site form is refused; bad filters answer 422; the pages fit a laptop
 * and a phone. Screenshots go to test-output/.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { chromiumAvailable, DECISION_ROWS } from "../helpers/browser.ts";
import { escalatedRecord as escalated, type ReviewPages, startReviewPages } from "../helpers/review-pages.ts";

const hasBrowser = chromiumAvailable();
let pages: ReviewPages;

beforeAll(async () => {
  if (hasBrowser) pages = await startReviewPages("review-browser");
}, 120_000);

afterAll(async () => {
  await pages?.close();
});

const signedIn = (name: string, group: "reviewers" | "admins") => pages.signedIn(name, group);
const itemUrl = (r: DecisionRecord) => pages.itemUrl(r);

describe.skipIf(!hasBrowser)("review pages in Chromium", () => {
  it("sends a visitor to the local sign-in, marked as local, and shows who is signed in", async () => {
    const context = await pages.browser.newContext();
    const page = await context.newPage();
    await page.goto(pages.server.url);
    expect(new URL(page.url()).pathname).toBe("/auth/login");
    expect(await page.locator("main").innerText()).toContain("Local mode only");
    await page.getByLabel("Name").fill("Ana");
    await Promise.all([
      page.waitForURL(`${pages.server.url}/`),
      page.getByRole("button", { name: "Sign in" }).click(),
    ]);
    expect(await page.locator("header").innerText()).toContain("Signed in as Ana");
    await context.close();
  });

  it("pages the queue oldest first with the total, and keeps a second reviewer off a claimed item", async () => {
    const records = [escalated(300), escalated(200), escalated(100), escalated(50)];
    for (const r of [...records].reverse()) await pages.store.create(r);
    const ana = await signedIn("Ana", "reviewers");
    const bo = await signedIn("Bo", "reviewers");
    try {
      const heading = await ana.page.locator("h1").innerText();
      const total = Number(/\((\d+) waiting\)/.exec(heading)?.[1]);
      expect(total).toBeGreaterThanOrEqual(4);
      expect(await ana.page.locator("tbody tr").count()).toBe(3);
      await ana.page.getByRole("link", { name: "Next page" }).click();
      expect(await ana.page.locator("tbody tr").count()).toBeGreaterThan(0);
      // Ana opens an item (which claims nothing), then claims it: Bo sees it taken, without answer buttons.
      const target = records[1]!;
      await ana.page.goto(itemUrl(target));
      expect(await ana.page.locator("button[name=label]").count()).toBe(4);
      expect((await pages.store.get(target))?.claim).toBeUndefined();
      await Promise.all([
        ana.page.waitForURL(itemUrl(target)),
        ana.page.getByRole("button", { name: /^Claim for 5 min/ }).click(),
      ]);
      expect(await ana.page.locator(".held").innerText()).toContain("Yours until");
      await bo.page.goto(itemUrl(target));
      expect(await bo.page.locator("[role=status].taken").innerText()).toContain(
        "Ana is reviewing this item",
      );
      expect(await bo.page.locator("button[name=label]").count()).toBe(0);
      await bo.page.goto(pages.server.url);
      expect(await bo.page.locator("body").innerText()).toContain("taken by Ana");
      await bo.page.screenshot({ path: join(pages.shots, "queue-claimed.png"), fullPage: true });
      expect((await pages.store.get(target))?.claim?.reviewerName).toBe("Ana");
    } finally {
      await ana.context.close();
      await bo.context.close();
    }
  });

  it("labels by keyboard only inside the focused item, after Enter, with readable fields and the reason in numbers", async () => {
    const record = escalated(30);
    await pages.store.create(record);
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
      expect((await pages.store.get(record))?.status).toBe("pending_review");
      await page.keyboard.press("2");
      await page.screenshot({ path: join(pages.shots, "item-armed.png"), fullPage: true });
      await Promise.all([page.waitForURL(/\?done=/), page.keyboard.press("Enter")]);
      expect(await page.locator(".toast").innerText()).toContain(
        `Labelled ${record.itemId} as Technical: errors`,
      );
      const stored = (await pages.store.get(record))!;
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
    await pages.store.create(mine);
    await pages.store.create(old);
    const dee = await signedIn("Dee", "reviewers");
    const root = await signedIn("Root", "admins");
    try {
      await dee.page.goto(itemUrl(mine));
      await Promise.all([
        dee.page.waitForURL(/\?done=/),
        dee.page.locator("button[name=label]").first().click(),
      ]);
      await dee.page.goto(itemUrl(mine));
      await Promise.all([
        dee.page.waitForURL(/\?done=/),
        dee.page.getByRole("button", { name: /Account: login/ }).click(),
      ]);
      expect((await pages.store.get(mine))?.label).toBe("account");
      expect(await dee.page.locator(".toast").innerText()).toContain("as Account: login");
      await Promise.all([
        dee.page.waitForURL(/\/items\//),
        dee.page.locator(".toast").getByRole("button", { name: "Undo" }).click(),
      ]);
      expect((await pages.store.get(mine))?.status).toBe("pending_review");
      // History names the options by their descriptions, as the buttons do.
      expect(await dee.page.locator("article ol").innerText()).toMatch(
        /labelled Billing: charges[\s\S]*changed the label to Account: login[\s\S]*\(was Billing: charges[\s\S]*undid the label/,
      );
      // Someone else's label: no undo for Dee; the admin may.
      await dee.page.goto(itemUrl(old));
      expect(await dee.page.getByRole("button", { name: /Undo the label/ }).count()).toBe(0);
      await root.page.goto(itemUrl(old));
      await root.page.getByRole("button", { name: /Undo the label/ }).click();
      expect(await pages.store.get(old)).toMatchObject({ status: "pending_review" });
      await root.page.screenshot({ path: join(pages.shots, "admin-undo.png"), fullPage: true });
      const revised = pages.events
        .filter((e) => e.detailType === "Decision Review Revised")
        .map((e) => e.detail);
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
    await pages.store.create(record);
    const { context, page } = await signedIn("Eli", "reviewers");
    // Another site (another origin on loopback) whose page posts a label to the review server.
    const evil: Server = createServer((_, response) => {
      response.setHeader("content-type", "text/html");
      response.end(`<form id="f" method="post" action="${pages.server.url}/reviews">
<input name="itemId" value="${record.itemId}"><input name="policyId" value="${record.policyId}">
<input name="policyVersion" value="1"><input name="label" value="billing"><input name="action" value="label"></form>
<script>document.getElementById("f").submit()</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    try {
      const response = page.waitForResponse((r) => r.url() === `${pages.server.url}/reviews`);
      await page.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`);
      expect([401, 403]).toContain((await response).status());
      const forged = await context.request.post(`${pages.server.url}/reviews`, {
        headers: { origin: "https://evil.example" },
        form: { itemId: record.itemId, policyId: record.policyId, policyVersion: "1", label: "billing" },
      });
      expect(forged.status()).toBe(403);
      expect(await forged.text()).toContain("cross-site request refused: Origin https://evil.example");
      const tokenless = await context.request.post(`${pages.server.url}/reviews`, {
        headers: { origin: pages.server.url },
        form: {
          itemId: record.itemId,
          policyId: record.policyId,
          policyVersion: "1",
          label: "billing",
          csrf: "guess-guess-guess-guess",
        },
      });
      expect(tokenless.status()).toBe(403);
      expect((await pages.store.get(record))?.status).toBe("pending_review");
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()));
      await context.close();
    }
  });

  it("answers bad decision filters with 422, and lays out decisions and the queue at laptop and phone width", async () => {
    const { context, page } = await signedIn("Fay", "reviewers");
    try {
      const bad = await page.goto(`${pages.server.url}/decisions?since=not-a-date&route=sideways`);
      expect(bad?.status()).toBe(422);
      expect(await page.locator("[role=alert]").innerText()).toMatch(
        /route: "sideways" is not one of auto, human[\s\S]*since: "not-a-date" is not a date/,
      );
      const badBatch = await page.goto(`${pages.server.url}/decisions?batch=Batch%201`);
      expect(badBatch?.status()).toBe(422);
      expect(await page.locator("[role=alert]").innerText()).toMatch(/batch: "Batch 1" is not a batch id/);
      // A batch none of these decisions came in: the filter leaves no row.
      const otherBatch = await page.goto(`${pages.server.url}/decisions?batch=b-none-of-these`);
      expect(otherBatch?.status()).toBe(200);
      // No decision of these came in that batch.
      expect(await page.locator(DECISION_ROWS).count()).toBe(0);
      await page.goto(`${pages.server.url}/decisions`);
      await page.locator("details summary").first().click();
      const overflow = () =>
        page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
      expect(await overflow()).toBeLessThanOrEqual(0);
      expect(await page.locator(DECISION_ROWS).first().innerText()).toContain("below the 80% threshold");
      await page.screenshot({ path: join(pages.shots, "decisions-detail-1280.png"), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(pages.server.url);
      expect(await overflow()).toBeLessThanOrEqual(0);
      await page.screenshot({ path: join(pages.shots, "queue-390.png"), fullPage: true });
    } finally {
      await context.close();
    }
  });
});

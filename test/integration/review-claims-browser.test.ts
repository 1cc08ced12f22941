/**
 * Claims, the keyboard flow and the page details in headless Chromium, on the real store
 * (DynamoDB Local): opening a page claims nothing (a link from another site cannot claim items);
 * a claim is an explicit POST by someone who may answer; Enter labels and opens the next item;
 * audit samples reviewed twice keep the first reviewer off and let the second and an admin in; an
 * admin takes over a claim; the local sign-in refuses a cross-site POST; the queue has excerpts,
 * decisions link to items, no word is broken at 1280 or 390 px, the toast can be dismissed and
 * covers nothing, and no page asks for a favicon that is not there. Screenshots: test-output/review/.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { chromiumAvailable } from "../helpers/browser.ts";
import { escalatedRecord, type ReviewPages, startReviewPages } from "../helpers/review-pages.ts";

const hasBrowser = chromiumAvailable();
let pages: ReviewPages;

beforeAll(async () => {
  if (hasBrowser) pages = await startReviewPages("review-claims", 25);
}, 120_000);

afterAll(async () => {
  await pages?.close();
});

/** A page on another origin of loopback serving `html`; closed by the returned function. */
async function otherSite(html: string): Promise<{ url: string; close: () => Promise<void> }> {
  const site: Server = createServer((_, response) => {
    response.setHeader("content-type", "text/html");
    response.end(html);
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://localhost:${(site.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => site.close(() => resolve())),
  };
}

/**
 * The words of the page's table cells and headings that the layout broke across two lines (a
 * word whose characters sit on more than one line box). Runs in the page, hence a string.
 */
const BROKEN_WORDS = `(() => {
  const broken = [];
  for (const element of document.querySelectorAll("td, th, h1, h2, .badge, .reason")) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of (node.textContent ?? "").matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
})()`;
const brokenWords = (page: Page) => page.evaluate<string[]>(BROKEN_WORDS);

const audit = (overrides: Partial<DecisionRecord> = {}) =>
  escalatedRecord(90, {
    policyId: "content-moderation",
    reason: "audit_sample",
    chosen: "allow",
    topProbability: 0.93,
    distribution: { allow: 0.93, restrict: 0.04, remove: 0.02, out_of_scope: 0.01 },
    state: "Lovely sunset over the harbour tonight, thanks to everyone who came along!",
    ...overrides,
  });

describe.skipIf(!hasBrowser)("claims and the review flow in Chromium", () => {
  it("claims nothing when a page is opened, even from a link on another site", async () => {
    const record = escalatedRecord(40);
    await pages.store.create(record);
    const site = await otherSite(`<a id="go" href="${pages.itemUrl(record)}">see this</a>`);
    const { context, page } = await pages.signedIn("Gil", "reviewers");
    try {
      await page.goto(site.url);
      await Promise.all([page.waitForURL(pages.itemUrl(record)), page.locator("#go").click()]);
      expect(await page.locator("article h2").innerText()).toContain(record.itemId);
      expect((await pages.store.get(record))?.claim).toBeUndefined();
      // A claim is a POST, and a cross-site one is refused.
      const forged = await context.request.post(`${pages.itemUrl(record)}/claim`, {
        headers: { origin: "https://evil.example" },
        form: {},
      });
      expect(forged.status()).toBe(403);
      expect((await pages.store.get(record))?.claim).toBeUndefined();
    } finally {
      await context.close();
      await site.close();
    }
  });

  it("starts with the oldest item, labels with Enter and opens the next one, claimed; Shift+Enter goes back", async () => {
    const [first, second] = [escalatedRecord(10_000), escalatedRecord(9_000)];
    for (const r of [first!, second!]) await pages.store.create(r);
    const { context, page } = await pages.signedIn("Hal", "reviewers");
    try {
      await page.goto(pages.server.url);
      await Promise.all([
        page.waitForURL(pages.itemUrl(first!)),
        page.getByRole("button", { name: /Start reviewing/ }).click(),
      ]);
      expect((await pages.store.get(first!))?.claim?.reviewerName).toBe("Hal");
      await page.keyboard.press("3");
      await Promise.all([
        page.waitForURL(new RegExp(`${second!.itemId}\\?done=`)),
        page.keyboard.press("Enter"),
      ]);
      expect(await pages.store.get(first!)).toMatchObject({ status: "reviewed", label: "account" });
      expect((await pages.store.get(second!))?.claim?.reviewerName).toBe("Hal");
      expect(await page.locator(".toast").innerText()).toContain(
        `Labelled ${first!.itemId} as Account: login`,
      );
      await page.screenshot({ path: join(pages.shots, "next-item-1280.png"), fullPage: true });
      await page.keyboard.press("1");
      await Promise.all([page.waitForURL(/\/\?done=/), page.keyboard.press("Shift+Enter")]);
      expect(await pages.store.get(second!)).toMatchObject({ status: "reviewed", label: "billing" });
    } finally {
      await context.close();
    }
  });

  it("keeps the first audit reviewer off, lets a second in, shows one badge when disputed, and lets an admin take over", async () => {
    const sample = audit();
    await pages.store.create(sample);
    const ana = await pages.signedIn("Ana", "reviewers");
    const bo = await pages.signedIn("Bo", "reviewers");
    const root = await pages.signedIn("Root", "admins");
    try {
      await ana.page.goto(pages.itemUrl(sample));
      await Promise.all([
        ana.page.waitForURL(/\?done=|\/$/),
        ana.page.locator("button[name=label]").first().click(),
      ]);
      expect((await pages.store.get(sample))?.firstReview?.reviewerName).toBe("Ana");
      // Ana again: no claim, no claim button, no answers; the item stays free for Bo.
      await ana.page.goto(pages.itemUrl(sample));
      expect(await ana.page.locator("[role=status].taken").innerText()).toContain(
        "You gave the first audit label",
      );
      expect(await ana.page.getByRole("button", { name: /Claim/ }).count()).toBe(0);
      expect((await pages.store.get(sample))?.claim).toBeUndefined();
      await bo.page.goto(pages.itemUrl(sample));
      expect(await bo.page.locator("button[name=label]").count()).toBe(4);
      await Promise.all([
        bo.page.waitForURL(pages.itemUrl(sample)),
        bo.page.getByRole("button", { name: /^Claim for/ }).click(),
      ]);
      // Root takes it over from Bo, then settles the dispute Bo's different label starts.
      await root.page.goto(pages.itemUrl(sample));
      expect(await root.page.locator("[role=status].taken").innerText()).toContain("Bo is reviewing");
      await Promise.all([
        root.page.waitForURL(pages.itemUrl(sample)),
        root.page.getByRole("button", { name: "Take over from Bo" }).click(),
      ]);
      expect((await pages.store.get(sample))?.claim?.reviewerName).toBe("Root");
      const disputed = audit();
      await pages.store.create(disputed);
      await pages.store.writeReview(
        disputed,
        {
          from: "pending_review",
          to: "pending_review",
          reviewVersion: 0,
          set: {
            firstReview: {
              label: "allow",
              reviewerId: "x",
              reviewerName: "Ana",
              at: new Date().toISOString(),
            },
            disputed: true,
          },
          entry: {
            action: "first_label",
            label: "allow",
            reviewerId: "x",
            reviewerName: "Ana",
            at: new Date().toISOString(),
          },
        },
        new Date(),
      );
      await root.page.goto(pages.itemUrl(disputed));
      const badges = await root.page.locator("article h2 .badge").allInnerTexts();
      expect(badges).toEqual(["disputed: an admin decides"]);
      expect(await root.page.locator("button[name=label]").count()).toBe(4);
      // Root settles it: the badge says so instead of still asking for an admin (before, it did).
      await Promise.all([
        root.page.waitForURL((url) => url.href !== pages.itemUrl(disputed)),
        root.page.locator("button[name=label]").first().click(),
      ]);
      expect((await pages.store.get(disputed))?.status).toBe("reviewed");
      await root.page.goto(pages.itemUrl(disputed));
      expect(await root.page.locator("article h2 .badge").allInnerTexts()).toEqual([
        "dispute settled by Root",
      ]);
    } finally {
      for (const who of [ana, bo, root]) await who.context.close();
    }
  });

  it("refuses a cross-site sign-in POST (no login CSRF)", async () => {
    const site = await otherSite(`<form id="f" method="post" action="${pages.server.url}/auth/login">
<input name="name" value="Mallory"><input name="group" value="admins"></form><script>document.getElementById("f").submit()</script>`);
    const context = await pages.browser.newContext();
    const page = await context.newPage();
    try {
      const response = page.waitForResponse((r) => r.url() === `${pages.server.url}/auth/login`);
      await page.goto(site.url);
      expect((await response).status()).toBe(403);
      const cookies = await context.cookies(pages.server.url);
      expect(cookies.map((c) => c.name)).not.toContain("review_session");
    } finally {
      await context.close();
      await site.close();
    }
  });

  it("shows excerpts, links decisions to items, breaks no word at 1280 or 390 px, and asks for no missing file", async () => {
    const long = escalatedRecord(5, {
      policyId: "content-moderation",
      chosen: "restrict",
      distribution: { allow: 0.2, restrict: 0.62, remove: 0.1, out_of_scope: 0.08 },
      state: "Selling cheap watches, message me for the link, limited offer this week only",
    });
    await pages.store.create(long);
    for (const width of [1280, 390]) {
      const { context, page } = await pages.signedIn("Ivy", "reviewers", { width, height: 900 });
      const missing: string[] = [];
      page.on("response", (r) => {
        if (r.status() === 404) missing.push(r.url());
      });
      try {
        await page.goto(pages.server.url);
        expect(await page.locator(".excerpt").first().innerText()).not.toBe("");
        expect(await page.locator("body").innerText()).toContain("Selling cheap watches");
        expect(await brokenWords(page)).toEqual([]);
        await page.screenshot({ path: join(pages.shots, `queue-${width}.png`), fullPage: true });
        await page.goto(`${pages.server.url}/decisions`);
        expect(await brokenWords(page)).toEqual([]);
        const link = page.getByRole("link", { name: long.itemId });
        await Promise.all([page.waitForURL(pages.itemUrl(long)), link.click()]);
        await page.screenshot({ path: join(pages.shots, `item-${width}.png`), fullPage: true });
        expect(
          await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth"),
        ).toBeLessThanOrEqual(0);
        expect(missing).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });

  it("puts the undo toast in the page's flow, and dismisses it", async () => {
    const record = escalatedRecord(3);
    await pages.store.create(record);
    const { context, page } = await pages.signedIn("Jo", "reviewers", { width: 390, height: 844 });
    try {
      await page.goto(pages.itemUrl(record));
      await page.locator("input[name=then]").uncheck();
      await Promise.all([page.waitForURL(/\/\?done=/), page.locator("button[name=label]").first().click()]);
      const toast = page.locator(".toast");
      expect(await page.evaluate<string>(`getComputedStyle(document.querySelector(".toast")).position`)).toBe(
        "static",
      );
      await page.screenshot({ path: join(pages.shots, "toast-390.png"), fullPage: true });
      await toast.getByRole("link", { name: /Dismiss/ }).click();
      expect(await page.locator(".toast").count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});

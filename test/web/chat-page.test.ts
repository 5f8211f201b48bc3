/**
 * The chat page in a real headless Chromium (Debian's, driven by
 * playwright-core): two browser contexts sign up, befriend, talk one to one
 * and in a group over svc.v2 with live delivery and unread counts; one goes
 * offline, and what was sent meanwhile shows after it reloads. A screenshot
 * of each side's conversation is kept in test-artifacts/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { startTestNode, type TestNode } from "../support/node.ts";

const CHROMIUM = process.env.IBIS_CHROMIUM ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dir, "../../test-artifacts");
const PWD = "correct horse battery";
const TIMEOUT = 10_000;

if (!existsSync(CHROMIUM)) {
  throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set IBIS_CHROMIUM`);
}

interface User {
  readonly ctx: BrowserContext;
  page: Page;
  readonly id: string;
}

const conv = (type: "c2c" | "c2g", id: string) => `#convs li[data-conv="${type}:${id}"]`;
const bodies = (page: Page) => page.locator("#messages .msg .body");

describe("chat page in Chromium", () => {
  let node: TestNode;
  let browser: Browser;
  let alice: User, bob: User;

  beforeAll(async () => {
    // Every browser connects from 127.0.0.1: lift the per-IP login and handshake throttles for the run.
    node = await startTestNode("pglite", { loginPerIp: 10_000, handshakePerIp: 10_000 });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-background-networking"] });
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 60_000); // Chromium starts slowly on a loaded machine
  afterAll(async () => {
    await browser?.close();
    await node?.stop();
  });

  async function signUp(name: string): Promise<User> {
    const ctx = await browser.newContext({ viewport: { width: 1000, height: 640 } });
    ctx.setDefaultTimeout(TIMEOUT);
    const page = await ctx.newPage();
    await page.goto(`${node.url}/app`);
    await page.fill("input[name=account]", `${name}-${Date.now().toString(36)}`);
    await page.fill("input[name=pwd]", PWD);
    await page.fill("input[name=nickname]", name);
    await page.click("button[name=signup]");
    await page.waitForSelector('#conn[data-state="online"]', { timeout: TIMEOUT });
    const id = (await page.textContent("#my-id"))!;
    expect(id).toMatch(/^\d+$/);
    return { ctx, page, id };
  }

  async function send(page: Page, text: string): Promise<void> {
    await page.fill("#composer input[name=text]", text);
    await page.click("#composer button");
    // Sent = the SERVER_ACK came back: the bubble shows its time instead of "sending…".
    await page.locator("#messages .msg.mine", { hasText: text }).locator(".meta", { hasNotText: "sending" }).waitFor({ timeout: TIMEOUT });
  }

  test(
    "sign up, befriend, C2C both ways, a group, unread counts",
    async () => {
      alice = await signUp("alice");
      bob = await signUp("bob");

      await alice.page.fill("#add-friend input[name=uid]", bob.id);
      await alice.page.click("#add-friend button");
      const request = bob.page.locator("#requests li", { hasText: "alice wants to be friends" });
      await request.waitFor({ timeout: TIMEOUT });
      await request.locator("button").click();
      await bob.page.waitForSelector(conv("c2c", alice.id), { timeout: TIMEOUT });
      await alice.page.waitForSelector(conv("c2c", bob.id), { timeout: TIMEOUT }); // apply_friend_confirm, live

      // alice → bob: live, with an unread badge on bob's side until he opens it
      await alice.page.click(conv("c2c", bob.id));
      await send(alice.page, "Hi Bob, this is Alice");
      await expect(waitText(bob.page, `${conv("c2c", alice.id)} .badge`, "1")).resolves.toBe("1");
      await bob.page.click(conv("c2c", alice.id));
      await bodies(bob.page).filter({ hasText: "Hi Bob, this is Alice" }).waitFor({ timeout: TIMEOUT });
      expect(await bob.page.textContent(`${conv("c2c", alice.id)} .badge`)).toBe("");

      // bob → alice: alice has the conversation open, so it just appears
      await send(bob.page, "Hello Alice!");
      await bodies(alice.page).filter({ hasText: "Hello Alice!" }).waitFor({ timeout: TIMEOUT });

      // a group with both
      await alice.page.click("aside details summary");
      await alice.page.fill("#new-group input[name=title]", "crew");
      await alice.page.check(`#group-members input[value="${bob.id}"]`);
      await alice.page.click("#new-group button");
      await alice.page.waitForSelector("#conv-title:text('crew')", { timeout: TIMEOUT });
      await send(alice.page, "hello crew");
      const group = bob.page.locator("#convs li", { hasText: "crew" });
      await expect(waitText(bob.page, "#convs li:has-text('crew') .badge", "1")).resolves.toBe("1");
      await group.click();
      await bodies(bob.page).filter({ hasText: "hello crew" }).waitFor({ timeout: TIMEOUT });
      await send(bob.page, "hi all");
      await bodies(alice.page).filter({ hasText: "hi all" }).waitFor({ timeout: TIMEOUT });
      await alice.page.screenshot({ path: join(ARTIFACTS, "chat-group.png") });
    },
    60_000,
  );

  test(
    "offline: what alice sends while bob's page is gone shows after he comes back, with its unread count",
    async () => {
      await alice.page.click(conv("c2c", bob.id));
      await bob.page.close();
      const away = ["Are you there?", "Sent while you were away"];
      for (const text of away) await send(alice.page, text);

      bob.page = await bob.ctx.newPage(); // same browser profile: the session comes from localStorage
      await bob.page.goto(`${node.url}/app`);
      await bob.page.waitForSelector('#conn[data-state="online"]', { timeout: TIMEOUT });
      await expect(waitText(bob.page, `${conv("c2c", alice.id)} .badge`, "2")).resolves.toBe("2");
      await bob.page.click(conv("c2c", alice.id));
      for (const text of away) await bodies(bob.page).filter({ hasText: text }).waitFor({ timeout: TIMEOUT });
      // History and pulled messages together, oldest first, each once.
      const shown = await bodies(bob.page).allTextContents();
      expect(shown).toEqual(["Hi Bob, this is Alice", "Hello Alice!", ...away]);

      await bob.page.screenshot({ path: join(ARTIFACTS, "chat-bob.png") });
      await alice.page.screenshot({ path: join(ARTIFACTS, "chat-alice.png") });
    },
    60_000,
  );

  test(
    "connection state: the page shows offline when the server drops it and online again after the immediate retry",
    async () => {
      const seen: string[] = [];
      await bob.page.exposeFunction("ibisState", (s: string) => seen.push(s));
      // (A string: this file is type-checked without the DOM lib.)
      await bob.page.evaluate(`{
        const conn = document.getElementById("conn");
        new MutationObserver(() => window.ibisState(conn.dataset.state)).observe(conn, { attributes: true });
      }`);
      for (const s of node.ws.registry.sessionsOf(BigInt(bob.id))) s.close(1012, "restart");
      await waitFor(() => seen.includes("online"));
      expect(seen[0]).toBe("offline");
      expect(seen).toContain("connecting");
      expect(seen.at(-1)).toBe("online");
    },
    30_000,
  );
});

/** Polls an element's text until it equals `want` (or the timeout); returns the last text seen. */
async function waitText(page: Page, selector: string, want: string): Promise<string> {
  const end = Date.now() + TIMEOUT;
  let text = "";
  while (Date.now() < end) {
    text = (await page.textContent(selector).catch(() => null)) ?? "";
    if (text === want) return text;
    await Bun.sleep(50);
  }
  return text;
}

async function waitFor(f: () => boolean): Promise<void> {
  const end = Date.now() + TIMEOUT;
  while (!f()) {
    if (Date.now() > end) throw new Error("timed out");
    await Bun.sleep(20);
  }
}

// Personal settings in a real browser (Chromium), in both modes: a member signs in through the form
// and changes their name, status, alert words, time format, theme and password; the owner, in a
// browser of their own, sees what others should see arrive live. Every section opened is checked
// with axe (no serious or critical violations), and neither browser may report a console error
// (CSP violations among them), a failed request or a server error.
import type { Page } from "playwright-core";
import { checkAccessibility, loginAs, MESSAGE_ROW, newPerson, submitLogin, useBrowser, waitForMessages, type Person } from "../support/browser.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

const LIVE = { timeout: 30_000 };

/** Gravatar pictures, which the test machine cannot reach (the client falls back to initials). */
const offline = (problem: { text: string }) => /secure\.gravatar\.com/.test(problem.text);

/** The page's globals these tests read, typed here (the root tsconfig has no DOM library). */
interface PageGlobals {
  document: { documentElement: { dataset: Record<string, string | undefined> }; body: object; querySelector(selector: string): object | null };
  location: { hash: string };
  getComputedStyle(element: object): { backgroundColor: string; color: string };
}

/** Polls `read` until `accept` holds of its value (Jest has no expect.poll); returns that value. */
async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = LIVE.timeout): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Opens a settings section in place (a hash change: the page and its event queue stay live). */
async function openSection(page: Page, hash: string, heading: string): Promise<void> {
  await page.evaluate((h) => {
    (globalThis as unknown as PageGlobals).location.hash = h;
  }, hash);
  await page.locator(".set-main h2").filter({ hasText: heading }).waitFor(LIVE);
  await page.locator(".set-main .set-muted", { hasText: "Loading…" }).waitFor({ state: "detached", ...LIVE });
}

describe.each(MODES)("personal settings in a browser (%s)", (mode) => {
  const handle = useBrowser();
  let server: TestServer;
  let member: TestUser;
  let me: Person;
  let owner: Person;
  let messageId = 0;

  beforeAll(async () => {
    server = await startTestServer(mode);
    member = await createTestUser(server, "Sam Settings");
    await subscribeTo(server.owner, ["general"], { principals: [OWNER_EMAIL, member.email] });
    messageId = await sendStreamMessage(server.owner, "general", "times", "What time is it where you are?");
    me = await newPerson(handle.browser, server, { email: member.email, password: "member-pass" });
    me.page.on("dialog", (dialog) => void dialog.accept());
    await waitForMessages(me.page, 30_000);
    owner = await newPerson(handle.browser, server, { email: OWNER_EMAIL, password: OWNER_PASSWORD }, { login: "http" });
    await owner.page.goto("/");
    await waitForMessages(owner.page, 30_000);
  }, 120_000);

  afterAll(async () => {
    await me?.close();
    await owner?.close();
    await server?.stop();
  });

  afterEach(() => {
    me.problems.expectNone(offline);
    owner.problems.expectNone(offline);
  });

  it("changes the full name; the owner sees the new name live", async () => {
    const page = me.page;
    await openSection(page, "#settings/profile", "Profile");
    await checkAccessibility(page);
    await page.getByLabel("Full name").fill("Samantha Settings");
    await page.getByRole("button", { name: "Save name" }).click();
    await page.getByRole("status").filter({ hasText: "Saved" }).first().waitFor(LIVE);
    await page.locator(".topbar-me-name", { hasText: "Samantha Settings" }).waitFor(LIVE);
    await owner.page.locator(".sidebar-right .sb-label", { hasText: "Samantha Settings" }).waitFor(LIVE);
    expect((await server.owner.get(`/users/${member.id}`)).body.user.full_name).toBe("Samantha Settings");
  }, 90_000);

  it("sets a status text and away, shown to the owner live", async () => {
    const page = me.page;
    await openSection(page, "#settings/status", "Status");
    await checkAccessibility(page);
    await page.getByLabel("Status text").fill("In a meeting");
    await page.getByLabel("Appear away to others").check();
    await page.getByRole("button", { name: "Save status" }).click();
    await page.getByRole("status").filter({ hasText: "Saved" }).first().waitFor(LIVE);
    await owner.page.locator(".sidebar-right .sb-status-text", { hasText: "In a meeting" }).waitFor(LIVE);
    const status = (await server.owner.get(`/users/${member.id}/status`)).body.status as { status_text?: string; away?: boolean };
    expect(status).toMatchObject({ status_text: "In a meeting", away: true });

    await page.getByRole("button", { name: "Clear status" }).click();
    await owner.page.locator(".sidebar-right .sb-status-text", { hasText: "In a meeting" }).waitFor({ state: "detached", ...LIVE });
  }, 90_000);

  it("adds and removes alert words", async () => {
    const page = me.page;
    await openSection(page, "#settings/alert-words", "Alert words");
    await checkAccessibility(page);
    const words = async () => (await member.client.get("/users/me/alert_words")).body.alert_words as string[];
    for (const word of ["deploy", "release train"]) {
      await page.getByLabel("New alert word").fill(word);
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await page.getByRole("list", { name: "Your alert words" }).getByText(word).waitFor(LIVE);
    }
    expect((await words()).sort()).toEqual(["deploy", "release train"]);
    await checkAccessibility(page);
    await page.getByRole("button", { name: "Remove deploy" }).click();
    await page.getByRole("button", { name: "Remove deploy" }).waitFor({ state: "detached", ...LIVE });
    expect(await words()).toEqual(["release train"]);
  }, 90_000);

  it("switches to 24-hour times, which the message list shows at once", async () => {
    const page = me.page;
    const time = page.locator(`${MESSAGE_ROW}[data-message-id="${messageId}"] .msg-time`);
    await expect(time.innerText()).resolves.toMatch(/\b(AM|PM)\b/);
    await openSection(page, "#settings/preferences", "Preferences");
    await checkAccessibility(page);
    await page.getByLabel("Show times in 24-hour format").check();
    await page.getByRole("status").filter({ hasText: "Saved" }).first().waitFor(LIVE);
    const shown = await until(() => time.innerText(), (text) => /^\d{2}:\d{2}$/.test(text.trim()));
    expect(shown).not.toMatch(/AM|PM/);
  }, 90_000);

  it("switches to the dark theme: the page turns dark", async () => {
    const page = me.page;
    await page.getByLabel("Theme").selectOption("2");
    await until(() => page.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.dataset.theme ?? ""), (theme) => theme === "dark");
    // Dark for real: the page's background is dark, its text light.
    const colours = await page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as unknown as PageGlobals;
      const luminance = (css: string) => {
        const [r, g, b] = (css.match(/\d+(\.\d+)?/g) ?? ["0", "0", "0"]).map(Number);
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
      };
      const body = getComputedStyle(document.body);
      const app = document.querySelector(".app");
      const background = app ? getComputedStyle(app).backgroundColor : body.backgroundColor;
      const usable = background === "rgba(0, 0, 0, 0)" ? body.backgroundColor : background;
      return { background: luminance(usable), text: luminance(body.color) };
    });
    expect(colours.background).toBeLessThan(0.3);
    expect(colours.text).toBeGreaterThan(0.6);
    await checkAccessibility(page);
    // Dark on the next load too (the setting is the account's, read from /register).
    await page.reload();
    await waitForMessages(page, 30_000);
    await until(() => page.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.dataset.theme ?? ""), (theme) => theme === "dark");
    await page.evaluate(() => {
      (globalThis as unknown as PageGlobals).location.hash = "#feed";
    });
    await checkAccessibility(page);
  }, 90_000);

  it("opens every other section accessibly", async () => {
    const page = me.page;
    for (const [hash, heading] of [
      ["#settings/account-and-privacy", "Account & privacy"],
      ["#settings/notifications", "Notifications"],
      ["#settings/muted-topics", "Muted topics"],
      ["#settings/your-bots", "Bots"],
      ["#organization/users", "Users"],
      ["#organization/organization-profile", "Organization profile"],
      ["#organization/streams", "Streams"],
      ["#organization/emoji-settings", "Custom emoji"],
      ["#organization/linkifier-settings", "Linkifiers"],
      ["#organization/user-groups-admin", "User groups"],
      ["#organization/profile-field-settings", "Profile fields"],
      ["#organization/default-streams-list", "Default streams"],
    ]) {
      await openSection(page, hash, heading);
      await checkAccessibility(page);
    }
    // Back to the light theme for whoever looks next.
    await openSection(page, "#settings/preferences", "Preferences");
    await page.getByLabel("Theme").selectOption("3");
    await until(() => page.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.dataset.theme ?? ""), (theme) => theme === "light");
    await checkAccessibility(page);
  }, 120_000);

  it("changes the password: the session ends, the new password signs in and the old one does not", async () => {
    const page = me.page;
    await openSection(page, "#settings/account-and-privacy", "Account & privacy");
    await page.getByLabel("Current password").fill("member-pass");
    await page.getByLabel("New password", { exact: true }).fill("a-new-Passw0rd-for-sam");
    await page.getByLabel("New password again").fill("a-new-Passw0rd-for-sam");
    await page.getByRole("button", { name: "Change password" }).click();
    // The server ends every session of the account; the client sends the person to sign in again.
    await page.waitForURL((url) => url.pathname === "/login", LIVE);
    me.problems.clear();

    await submitLogin(page, me.origin, member.email, "member-pass");
    expect(new URL(page.url()).pathname).not.toBe("/");
    await expect(page.locator('[role="alert"]').innerText()).resolves.toMatch(/incorrect|wrong|invalid/i);

    await loginAs(me.context, me.origin, member.email, "a-new-Passw0rd-for-sam", { page });
    await waitForMessages(page, 30_000);
    await expect(page.locator(".topbar-me-name").innerText()).resolves.toBe("Samantha Settings");
  }, 90_000);
});

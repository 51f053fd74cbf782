// Administering an organization from the web client in a real browser (Chromium), in both modes:
// the owner signs in through the form and works the Organization and Settings screens; a second
// person, in a browser of their own, sees each change arrive (live, through their event queue).
// Each screen opened is checked with axe; the owner's pages must report no console errors (CSP
// violations among them), failed requests or server errors.
import type { Page } from "playwright-core";
import { checkAccessibility, newPerson, useBrowser, type Person } from "../support/browser.ts";
import { makePng } from "../support/images.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

/** Long enough for a change to cross the event queue on a busy two-core machine. */
const LIVE = { timeout: 30_000 };

/** A 400 (the queue it ended), 401 or 403 the browser logs as a failed resource: expected of a session an admin ended. */
const endedSession = (problem: { kind: string; text: string }) => offline(problem) || (problem.kind === "console" && /status of 40[013]/.test(problem.text));

/** Gravatar pictures, which the test machine cannot reach (the client falls back to initials). */
const offline = (problem: { text: string }) => /secure\.gravatar\.com/.test(problem.text);

async function openSection(page: Page, hash: string, heading: string): Promise<void> {
  await page.goto(`/${hash}`);
  await page.locator(".set-main h2").filter({ hasText: heading }).waitFor(LIVE);
  await page.locator(".set-main .set-muted", { hasText: "Loading…" }).waitFor({ state: "detached", ...LIVE });
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

async function waitForApp(page: Page): Promise<void> {
  await page.locator(".topbar").waitFor(LIVE);
}

describe.each(MODES)("administering the organization in a browser (%s)", (mode) => {
  const handle = useBrowser();
  let server: TestServer;
  let owner: Person;
  let bea: TestUser;
  let other: Person;
  let newcomer: Person | null = null;
  let newcomerEmail = "";
  let newcomerId = 0;

  beforeAll(async () => {
    server = await startTestServer(mode);
    bea = await createTestUser(server, "Bea Watcher");
    await subscribeTo(server.owner, ["general"], { principals: [OWNER_EMAIL, bea.email] });
    await sendStreamMessage(server.owner, "general", "welcome", "Welcome to the organization!");
    owner = await newPerson(handle.browser, server, { email: OWNER_EMAIL, password: OWNER_PASSWORD });
    // Deletions and deactivations ask first.
    owner.page.on("dialog", (dialog) => void dialog.accept());
    other = await newPerson(handle.browser, server, { email: bea.email, password: "member-pass" }, { login: "http" });
    await other.page.goto("/");
    await waitForApp(other.page);
  }, 120_000);

  afterAll(async () => {
    await newcomer?.close();
    await other?.close();
    await owner?.close();
    await server?.stop();
  });

  afterEach(() => {
    owner.problems.expectNone(offline);
    other.problems.expectNone(offline);
  });

  it("adds a user, who signs in with the password shown and lands in the app", async () => {
    const page = owner.page;
    await openSection(page, "#organization/users", "Users");
    await checkAccessibility(page);
    newcomerEmail = `newcomer.${mode}@example.com`;
    await page.locator("summary", { hasText: "Add a user" }).click();
    await page.getByLabel("Email", { exact: true }).fill(newcomerEmail);
    await page.getByLabel("Full name", { exact: true }).fill("Nora Newcomer");
    await page.getByRole("button", { name: "Add user", exact: true }).click();
    const note = page.getByRole("note").filter({ hasText: newcomerEmail });
    await note.waitFor(LIVE);
    const password = (await note.locator(".set-key").innerText()).trim();
    expect(password.length).toBeGreaterThanOrEqual(6);
    // The list shows the new user.
    await page.getByRole("row").filter({ hasText: newcomerEmail }).waitFor(LIVE);

    newcomer = await newPerson(handle.browser, server, { email: newcomerEmail, password });
    expect(new URL(newcomer.page.url()).pathname).toBe("/");
    await waitForApp(newcomer.page);
    await expect(newcomer.page.locator(".topbar-me-name").innerText()).resolves.toBe("Nora Newcomer");
    const users = (await server.owner.get("/users")).body.members as Array<{ email: string; user_id: number; delivery_email?: string }>;
    newcomerId = users.find((u) => (u.delivery_email ?? u.email) === newcomerEmail)!.user_id;
    expect(newcomerId).toBeGreaterThan(0);
  }, 120_000);

  it("changes the user's role and back, deactivates them (their session ends) and reactivates them", async () => {
    const page = owner.page;
    const row = page.getByRole("row").filter({ hasText: newcomerEmail });
    const role = async () => (await server.owner.get(`/users/${newcomerId}`)).body.user.role as number;

    await row.getByLabel("Role of Nora Newcomer").selectOption("200");
    await row.getByText("is now administrator").waitFor(LIVE);
    expect(await role()).toBe(200);
    await row.getByLabel("Role of Nora Newcomer").selectOption("400");
    await row.getByText("is now member").waitFor(LIVE);
    expect(await role()).toBe(400);

    await row.getByRole("button", { name: "Deactivate" }).click();
    // The list reloads without them (active users only).
    await page.getByRole("row").filter({ hasText: newcomerEmail }).waitFor({ state: "detached", ...LIVE });
    expect((await server.owner.get(`/users/${newcomerId}`)).body.user.is_active).toBe(false);
    // Their open page notices the session is gone and goes to the login page.
    await newcomer!.page.waitForURL((url) => url.pathname === "/login", { timeout: 45_000 });
    // And coming back to / with the old cookie is sent to /login too.
    await newcomer!.page.goto("/");
    expect(new URL(newcomer!.page.url()).pathname).toBe("/login");
    newcomer!.problems.expectNone(endedSession);

    await page.getByLabel("Show deactivated users").check();
    const inactive = page.getByRole("row").filter({ hasText: newcomerEmail });
    await inactive.getByRole("button", { name: "Reactivate" }).click();
    await inactive.waitFor({ state: "detached", ...LIVE });
    expect((await server.owner.get(`/users/${newcomerId}`)).body.user.is_active).toBe(true);
    await checkAccessibility(page);
  }, 120_000);

  it("creates a private and a public stream; the other person finds the public one, subscribes and unsubscribes", async () => {
    const page = owner.page;
    await openSection(page, "#organization/streams", "Streams");
    await checkAccessibility(page);
    const create = async (name: string, description: string, privateStream: boolean) => {
      const details = page.locator("details.set-details");
      if (!(await details.evaluate((el) => (el as unknown as { open: boolean }).open))) await details.locator("summary").click();
      await details.getByLabel("Stream name").fill(name);
      await details.getByLabel("Description").fill(description);
      const box = details.getByLabel("Private: only subscribers see it and its messages");
      if (privateStream) await box.check();
      else await box.uncheck();
      await details.getByRole("button", { name: "Create stream" }).click();
      await page.locator(".set-card-head strong").filter({ hasText: name }).waitFor(LIVE);
    };
    await create("secret-plans", "Only for the owner", true);
    await create("announcements", "News for everyone", false);
    await checkAccessibility(page);

    const streams = (await server.owner.get("/streams", { include_all_active: true })).body.streams as Array<{ name: string; invite_only: boolean }>;
    expect(streams.find((s) => s.name === "secret-plans")?.invite_only).toBe(true);
    expect(streams.find((s) => s.name === "announcements")?.invite_only).toBe(false);

    const browser = other.page;
    await browser.goto("/#channels/all");
    await browser.getByRole("button", { name: "Subscribe to announcements" }).waitFor(LIVE);
    await expect(browser.locator(".chb-name", { hasText: "secret-plans" }).count()).resolves.toBe(0);
    await checkAccessibility(browser);
    await browser.getByRole("button", { name: "Subscribe to announcements" }).click();
    await browser.getByRole("button", { name: "Unsubscribe from announcements" }).waitFor(LIVE);
    await browser.locator(".sidebar-left .sb-label", { hasText: /^announcements$/ }).waitFor(LIVE);
    const subscribed = async () => ((await bea.client.get("/users/me/subscriptions")).body.subscriptions as Array<{ name: string }>).map((s) => s.name);
    expect(await subscribed()).toContain("announcements");
  }, 120_000);

  it("renames and describes a stream; the other person's sidebar shows the new name live", async () => {
    const page = owner.page;
    await page.getByRole("button", { name: "Edit #announcements" }).click();
    const form = page.locator(".set-card form");
    await form.getByLabel("Name", { exact: true }).fill("company-news");
    await form.getByLabel("Description").fill("What the company announces");
    await form.getByRole("button", { name: "Save" }).click();
    await page.locator(".set-card-head strong").filter({ hasText: "company-news" }).waitFor(LIVE);
    await page.getByText("What the company announces").waitFor(LIVE);

    await other.page.goto("/#feed");
    await other.page.locator(".sidebar-left .sb-label", { hasText: /^company-news$/ }).waitFor(LIVE);
    await expect(other.page.locator(".sidebar-left .sb-label", { hasText: /^announcements$/ }).count()).resolves.toBe(0);

    // Unsubscribing from the browser of channels.
    await other.page.goto("/#channels/all");
    await other.page.getByRole("button", { name: "Unsubscribe from company-news" }).click();
    await other.page.getByRole("button", { name: "Subscribe to company-news" }).waitFor(LIVE);
    await until(
      async () => ((await bea.client.get("/users/me/subscriptions")).body.subscriptions as Array<{ name: string }>).map((s) => s.name),
      (names) => !names.includes("company-news"),
    );
    await other.page.keyboard.press("Escape");
    await other.page.locator(".sidebar-left .sb-label", { hasText: /^company-news$/ }).waitFor({ state: "detached", ...LIVE });
  }, 120_000);

  it("renames the organization; the other person's top bar and title show it live", async () => {
    const page = owner.page;
    await openSection(page, "#organization/organization-profile", "Organization profile");
    await checkAccessibility(page);
    await page.getByLabel("Organization name").fill("Acme Rockets");
    await page.getByRole("button", { name: "Save changes" }).first().click();
    await page.getByRole("status").filter({ hasText: "Saved" }).first().waitFor(LIVE);
    await other.page.locator(".topbar-realm-name", { hasText: "Acme Rockets" }).waitFor(LIVE);
    await until(() => other.page.title(), (title) => title.includes("Acme Rockets"));

    await openSection(page, "#organization/organization-settings", "Organization settings");
    await checkAccessibility(page);
    await openSection(page, "#organization/organization-permissions", "Permissions");
    await checkAccessibility(page);
  }, 120_000);

  it("adds a custom emoji, usable in a message and as a reaction", async () => {
    const page = owner.page;
    await openSection(page, "#organization/emoji-settings", "Custom emoji");
    await checkAccessibility(page);
    await page.getByLabel("Name", { exact: true }).fill("party_test");
    await page.getByLabel("Image").setInputFiles({ name: "party.png", mimeType: "image/png", buffer: await makePng(64, 64, "#ff8800") });
    await page.getByRole("button", { name: "Add emoji" }).click();
    await page.locator('.set-table img[alt=":party_test:"]').waitFor(LIVE);
    await checkAccessibility(page);

    await other.page.goto("/#feed");
    const id = await sendStreamMessage(server.owner, "general", "celebrations", "We shipped! :party_test:");
    const row = other.page.locator(`[data-message-id="${id}"]`);
    await row.locator('.msg-content img[alt=":party_test:"]').waitFor(LIVE);

    // The owner reacts with it; the other person sees the reaction and adds theirs by clicking it.
    const reacted = await server.owner.post(`/messages/${id}/reactions`, { emoji_name: "party_test" });
    expect(reacted.body.result).toBe("success");
    const reaction = row.locator(".msg-reaction").filter({ has: other.page.locator('img[alt=":party_test:"], img') });
    await reaction.first().waitFor(LIVE);
    await expect(reaction.first().locator(".msg-reaction-count").innerText()).resolves.toBe("1");
    await reaction.first().click();
    await until(() => reaction.first().locator(".msg-reaction-count").innerText(), (count) => count === "2");
    const message = (await server.owner.get(`/messages/${id}`)).body.message as { reactions: Array<{ emoji_name: string; reaction_type: string; user_id: number }> };
    expect(message.reactions.filter((r) => r.emoji_name === "party_test").map((r) => r.user_id)).toContain(bea.id);
    expect(message.reactions[0].reaction_type).toBe("realm_emoji");
  }, 120_000);

  it("adds a linkifier; a message that matches it shows a link", async () => {
    const page = owner.page;
    await openSection(page, "#organization/linkifier-settings", "Linkifiers");
    await checkAccessibility(page);
    // This server takes Zulip 3.x's format string (%(name)s), not the later URL template ({name}).
    await page.getByLabel("Pattern (a regular expression with named groups)").fill("#(?P<id>[0-9]+)");
    await page.getByLabel("URL format").fill("https://tracker.example/issues/%(id)s");
    await page.getByRole("button", { name: "Add linkifier" }).click();
    await page.locator(".set-card .set-key", { hasText: "#(?P<id>[0-9]+)" }).waitFor(LIVE);
    await checkAccessibility(page);

    const id = await sendStreamMessage(server.owner, "general", "bugs", "see #123");
    await other.page.locator(`[data-message-id="${id}"] .msg-content a[href="https://tracker.example/issues/123"]`).waitFor(LIVE);
    await expect(other.page.locator(`[data-message-id="${id}"] .msg-content a`).innerText()).resolves.toBe("#123");
  }, 120_000);

  it("creates a generic bot whose API key, shown, works against the API", async () => {
    const page = owner.page;
    await openSection(page, "#settings/your-bots", "Bots");
    await checkAccessibility(page);
    await page.getByLabel("Bot type").selectOption("1");
    await page.getByLabel("Name", { exact: true }).fill("Deploy Bot");
    await page.getByLabel("Username").fill("deploy");
    await page.getByRole("button", { name: "Create bot" }).click();
    const card = page.locator(".set-card").filter({ hasText: "Deploy Bot" });
    await card.waitFor(LIVE);
    await card.getByRole("button", { name: "Show key" }).click();
    const key = (await card.locator(".set-key").innerText()).trim();
    expect(key).toMatch(/^[A-Za-z0-9]{16,}$/);
    const email = (await card.locator("p.set-muted").first().innerText()).trim();
    expect(email).toMatch(/^deploy-bot@/);
    await checkAccessibility(page);

    const answer = await fetch(`${server.baseUrl}/api/v1/users/me`, { headers: { Authorization: `Basic ${Buffer.from(`${email}:${key}`).toString("base64")}` } });
    expect(answer.status).toBe(200);
    const me = (await answer.json()) as { result: string; is_bot: boolean; full_name: string; email: string };
    expect(me).toMatchObject({ result: "success", is_bot: true, full_name: "Deploy Bot" });

    // The organization's list of bots shows it too.
    await openSection(page, "#organization/bot-list-admin", "Bots");
    await page.getByRole("row").filter({ hasText: "Deploy Bot" }).waitFor(LIVE);
    await checkAccessibility(page);
  }, 120_000);
});

// Signing in to the web client in a real browser (Chromium), in both modes: the login page renders
// (accessibly, under its CSP), a wrong password shows the form again with an error and no session,
// the right one lands on `/` with the session cookies, where the web client starts and shows the
// message list.
import { checkAccessibility, MESSAGE_ROW, newPerson, screenshot, submitLogin, useBrowser, waitForMessages, type Person } from "../support/browser.ts";
import { sendStreamMessage } from "../support/messages.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";

describe.each(MODES)("logging in with a browser (%s)", (mode) => {
  const handle = useBrowser();
  let server: TestServer;
  let person: Person | null = null;

  beforeAll(async () => {
    server = await startTestServer(mode);
  });

  afterEach(async () => {
    await person?.close();
    person = null;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("shows the login page, with no accessibility or CSP problems", async () => {
    person = await newPerson(handle.browser, server, null);
    const response = await person.page.goto("/login");
    expect(response?.status()).toBe(200);
    await expect(person.page.locator('form input[name="password"][type="password"]').count()).resolves.toBe(1);
    await expect(person.page.locator('form input[name="email"], form input[name="username"]').count()).resolves.toBe(1);
    await expect(person.page.locator('form button[type="submit"], form input[type="submit"]').count()).resolves.toBeGreaterThan(0);
    await checkAccessibility(person.page);
    await screenshot(person.page, "login", { readme: true });
    person.problems.expectNone();
  });

  it("shows an error and starts no session on a wrong password", async () => {
    person = await newPerson(handle.browser, server, null);
    await submitLogin(person.page, person.origin, OWNER_EMAIL, "not-the-password");
    expect(new URL(person.page.url()).pathname).not.toBe("/");
    await expect(person.page.locator('[role="alert"]').innerText()).resolves.toMatch(/incorrect|wrong|invalid/i);
    // The address typed is kept; the password is not sent back.
    await expect(person.page.locator('form input[name="email"], form input[name="username"]').inputValue()).resolves.toBe(OWNER_EMAIL);
    await expect(person.page.locator('form input[name="password"]').inputValue()).resolves.toBe("");
    expect(Object.keys(await person.cookies())).not.toContain("sessionid");
    await checkAccessibility(person.page);
    person.problems.expectNone();
  });

  it("lands on the web client at / with the session cookies, and the client shows messages", async () => {
    await sendStreamMessage(server.owner, "general", "browser login", "Hello from **the API**");
    person = await newPerson(handle.browser, server, null);
    const registered = person.page.waitForResponse((r) => new URL(r.url()).pathname === "/json/register", { timeout: 20_000 });
    await submitLogin(person.page, person.origin, OWNER_EMAIL, OWNER_PASSWORD);
    expect(new URL(person.page.url()).pathname).toBe("/");

    const cookies = await person.context.cookies(person.origin);
    const session = cookies.find((c) => c.name === "sessionid");
    const csrf = cookies.find((c) => c.name === "csrftoken");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/", secure: false });
    expect(csrf).toMatchObject({ httpOnly: false, sameSite: "Strict", path: "/" });

    // The client registers through the session (no API key in the page) and shows the message.
    expect((await registered).status()).toBe(200);
    await waitForMessages(person.page);
    await expect(person.page.locator(MESSAGE_ROW).last().innerText()).resolves.toContain("Hello from the API");
    await screenshot(person.page, "after-login");
    person.problems.expectNone();

    // Loading `/` again with the session shows the client again.
    const again = await person.page.goto("/");
    expect(again?.status()).toBe(200);
    await waitForMessages(person.page);
    person.problems.expectNone();
  });
});

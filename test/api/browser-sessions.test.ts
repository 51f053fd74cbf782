// Browser sessions (the web client's way in): GET /login, POST /accounts/login/ and /logout/, the
// `sessionid` and `csrftoken` cookies, and /json/... as /api/v1/... authenticated by the session
// alone, with the CSRF token on unsafe methods. Over real HTTP, with the Host header each request
// names (realms are subdomains of chat.test).
import http from "node:http";
import { createRealm } from "@chat/core";
import { checkResponse } from "../support/openapi.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";
import { createMember } from "../support/users.ts";

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: Record<string, any>;
  /** Set-Cookie values by cookie name. */
  cookies: Map<string, string>;
}

interface RequestOptions {
  host?: string;
  headers?: Record<string, string>;
  form?: Record<string, string>;
  query?: Record<string, string>;
}

function send(server: TestServer, method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  const query = options.query ? `?${new URLSearchParams(options.query)}` : "";
  const headers: Record<string, string> = { Host: options.host ?? "chat.test", ...options.headers };
  if (body !== undefined) Object.assign(headers, { "Content-Type": "application/x-www-form-urlencoded", "Content-Length": String(Buffer.byteLength(body)) });
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.baseUrl}${path}${query}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: Record<string, any> = {};
        if (res.headers["content-type"]?.includes("json")) json = JSON.parse(text);
        const cookies = new Map<string, string>();
        for (const value of res.headers["set-cookie"] ?? []) cookies.set(value.slice(0, value.indexOf("=")), value);
        resolve({ status: res.statusCode!, headers: res.headers, text, json, cookies });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A cookie's value in a Set-Cookie line. */
function cookieValue(setCookie: string | undefined): string {
  if (setCookie === undefined) throw new Error("no such cookie set");
  return setCookie.slice(setCookie.indexOf("=") + 1, setCookie.indexOf(";"));
}

function attributes(setCookie: string): string[] {
  return setCookie
    .split(";")
    .slice(1)
    .map((part) => part.trim().toLowerCase());
}

interface Browser {
  sessionid: string;
  csrftoken: string;
  host: string;
}

function cookieHeader(browser: Browser): string {
  return `sessionid=${browser.sessionid}; csrftoken=${browser.csrftoken}`;
}

/** What a browser sends on /json/: its cookies, and the CSRF token as the web client sends it. */
function asBrowser(browser: Browser, extra: Record<string, string> = {}): RequestOptions["headers"] {
  return { Cookie: cookieHeader(browser), "X-CSRFToken": browser.csrftoken, ...extra };
}

/** GET /login then POST /accounts/login/, as a browser does; the answer of the POST. */
async function submitLogin(server: TestServer, username: string, password: string, options: { host?: string; next?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const host = options.host ?? "chat.test";
  const page = await send(server, "GET", "/login", { host });
  expect(page.status).toBe(200);
  const formToken = cookieValue(page.cookies.get("csrftoken"));
  expect(page.text).toContain(`name="csrfmiddlewaretoken" value="${formToken}"`);
  const form: Record<string, string> = { username, password, csrfmiddlewaretoken: formToken };
  if (options.next !== undefined) form.next = options.next;
  return send(server, "POST", "/accounts/login/", { host, form, headers: { Cookie: `csrftoken=${formToken}`, ...options.headers } });
}

async function login(server: TestServer, username: string, password: string, host = "chat.test"): Promise<Browser> {
  const res = await submitLogin(server, username, password, { host });
  expect(res.status).toBe(302);
  return { sessionid: cookieValue(res.cookies.get("sessionid")), csrftoken: cookieValue(res.cookies.get("csrftoken")), host };
}

async function me(server: TestServer, browser: Browser): Promise<Answer> {
  return send(server, "GET", "/json/users/me", { host: browser.host, headers: { Cookie: cookieHeader(browser) } });
}

describe.each(MODES)("browser sessions (%s)", (mode) => {
  let server: TestServer;
  let ownerId: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    ownerId = (await server.owner.get("/users/me")).body.user_id;
  });
  afterAll(() => server.stop());

  test("the login page is a form with no script, a strict CSP and a form token in a cookie", async () => {
    const page = await send(server, "GET", "/login", { query: { next: "#narrow/channel/1-general" } });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.headers["content-security-policy"]).toMatch(/default-src 'none'/);
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(page.text).not.toMatch(/<script/i);
    expect(page.text).toContain('<form method="post" action="/accounts/login/">');
    expect(page.text).toContain('name="next" value="#narrow/channel/1-general"');
    const csrf = page.cookies.get("csrftoken")!;
    expect(attributes(csrf)).toEqual(expect.arrayContaining(["path=/", "samesite=strict"]));
    expect(attributes(csrf)).not.toContain("httponly");
    // A browser that has its token keeps it.
    const again = await send(server, "GET", "/login", { headers: { Cookie: `csrftoken=${cookieValue(csrf)}` } });
    expect(again.cookies.has("csrftoken")).toBe(false);
    expect(again.text).toContain(`value="${cookieValue(csrf)}"`);
    // A next that is not a hash route is dropped (no open redirect).
    const evil = await send(server, "GET", "/login", { query: { next: "https://evil.example/" } });
    expect(evil.text).not.toContain("evil.example");
  });

  test("logging in sets an HttpOnly Lax session cookie and a script-readable Strict CSRF cookie, and goes to the web client", async () => {
    const res = await submitLogin(server, OWNER_EMAIL, OWNER_PASSWORD, { next: "#narrow/is/starred" });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe("/#narrow/is/starred");
    const session = res.cookies.get("sessionid")!;
    const csrf = res.cookies.get("csrftoken")!;
    expect(cookieValue(session)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(attributes(session)).toEqual(expect.arrayContaining(["path=/", "samesite=lax", "httponly", `max-age=${14 * 24 * 3600}`]));
    expect(attributes(csrf)).toEqual(expect.arrayContaining(["path=/", "samesite=strict"]));
    expect(attributes(csrf)).not.toContain("httponly");
    // Plain HTTP: not Secure (the browser would not send it back).
    expect(attributes(session)).not.toContain("secure");
    expect(attributes(csrf)).not.toContain("secure");
    // Only the token's hash is stored.
    const rows = await server.running.services.db.prisma.browserSession.findMany({ where: { user_id: ownerId } });
    expect(rows.some((row) => row.id === cookieValue(session))).toBe(false);
    expect(rows.every((row) => /^[0-9a-f]{64}$/.test(row.id))).toBe(true);
    // Any other next goes to /.
    const plain = await submitLogin(server, OWNER_EMAIL, OWNER_PASSWORD, { next: "//evil.example/" });
    expect(plain.headers.location).toBe("/");
    // A hash route in any script reaches the header as percent-encoded UTF-8.
    const unicode = await submitLogin(server, OWNER_EMAIL, OWNER_PASSWORD, { next: "#narrow/channel/1-café/topic/日本\ud800" });
    expect(unicode.headers.location).toBe("/#narrow/channel/1-caf%C3%A9/topic/%E6%97%A5%E6%9C%AC%EF%BF%BD");
  });

  test("behind a trusted proxy that says https, both cookies are Secure", async () => {
    const res = await submitLogin(server, OWNER_EMAIL, OWNER_PASSWORD, { headers: { "X-Forwarded-Proto": "https" } });
    expect(res.status).toBe(302);
    expect(attributes(res.cookies.get("sessionid")!)).toContain("secure");
    expect(attributes(res.cookies.get("csrftoken")!)).toContain("secure");
  });

  test("a wrong password or an unknown address shows the form again, the same words either way, and starts no session", async () => {
    const wrong = await submitLogin(server, OWNER_EMAIL, "not-the-password");
    const unknown = await submitLogin(server, "nobody@example.com", "not-the-password");
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(200);
      expect(res.cookies.has("sessionid")).toBe(false);
      expect(res.text).toContain("Incorrect email address or password.");
    }
    // The same page but for the address typed and each browser's form token.
    const plain = (text: string, email: string) => text.replace(email, "X").replace(/name="csrfmiddlewaretoken" value="[^"]*"/, "");
    expect(plain(wrong.text, OWNER_EMAIL)).toBe(plain(unknown.text, "nobody@example.com"));
  });

  test("a login form without its token, or sent from another site, is refused", async () => {
    const page = await send(server, "GET", "/login");
    const token = cookieValue(page.cookies.get("csrftoken"));
    const noCookie = await send(server, "POST", "/accounts/login/", { form: { username: OWNER_EMAIL, password: OWNER_PASSWORD, csrfmiddlewaretoken: token } });
    const noField = await send(server, "POST", "/accounts/login/", { form: { username: OWNER_EMAIL, password: OWNER_PASSWORD }, headers: { Cookie: `csrftoken=${token}` } });
    const otherSite = await send(server, "POST", "/accounts/login/", {
      form: { username: OWNER_EMAIL, password: OWNER_PASSWORD, csrfmiddlewaretoken: token },
      headers: { Cookie: `csrftoken=${token}`, Origin: "https://evil.example" },
    });
    for (const res of [noCookie, noField, otherSite]) {
      expect(res.status).toBe(403);
      expect(res.cookies.has("sessionid")).toBe(false);
    }
  });

  test("/json/ is the API for the session's user, answering as /api/v1 does", async () => {
    const browser = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const res = await me(server, browser);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ result: "success", user_id: ownerId, email: OWNER_EMAIL });
    checkResponse("GET", "/api/v1/users/me", res.status, res.json, res.headers["content-type"]);
    // GET /messages, whose /api/v1 twin is a hot route.
    const messages = await send(server, "GET", "/json/messages", { headers: { Cookie: cookieHeader(browser) }, query: { anchor: "newest", num_before: "5", num_after: "0", narrow: "[]" } });
    expect(messages.status).toBe(200);
    checkResponse("GET", "/api/v1/messages?anchor=newest&num_before=5&num_after=0&narrow=%5B%5D", messages.status, messages.json, messages.headers["content-type"]);
  });

  test("an uploaded file downloads with the session cookie (the web client's images), and not without", async () => {
    const uploaded = await server.owner.raw("post", "/user_uploads").attach("file", Buffer.from("for the browser"), "notes.txt");
    expect(uploaded.body.result).toBe("success");
    const browser = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const download = await send(server, "GET", uploaded.body.uri, { headers: { Cookie: cookieHeader(browser) } });
    expect([download.status, download.text]).toEqual([200, "for the browser"]);
    expect((await send(server, "GET", uploaded.body.uri)).status).toBe(401);
    // An ended session asks for a session, not Basic (which would make the browser prompt).
    const ended = await send(server, "GET", uploaded.body.uri, { headers: { Cookie: `sessionid=${"A".repeat(43)}` } });
    expect([ended.status, ended.headers["www-authenticate"]]).toEqual([401, "session"]);
  });

  test("files upload through /json/ as multipart bodies, as through /api/v1", async () => {
    const browser = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const boundary = "----teamchat-test-boundary";
    const body = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="web.txt"\r\nContent-Type: text/plain\r\n\r\nfrom the web client\r\n--${boundary}--\r\n`);
    const answer = await new Promise<{ status: number; json: Record<string, any> }>((resolve, reject) => {
      const req = http.request(`${server.baseUrl}/json/user_uploads`, {
        method: "POST",
        headers: { Host: "chat.test", ...asBrowser(browser), "Content-Type": `multipart/form-data; boundary=${boundary}`, "Content-Length": String(body.length) },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      });
      req.on("error", reject);
      req.end(body);
    });
    expect(answer.status).toBe(200);
    expect(answer.json.result).toBe("success");
    const download = await send(server, "GET", answer.json.uri, { headers: { Cookie: cookieHeader(browser) } });
    expect([download.status, download.text]).toEqual([200, "from the web client"]);
  });

  test("the login form is served with a referrer policy under which a browser's post names its origin", async () => {
    const page = await send(server, "GET", "/login");
    // Under no-referrer, Chromium posts the form with `Origin: null`, which the Origin check refuses.
    expect(page.headers["referrer-policy"]).toBe("same-origin");
    expect(page.text).toContain('<meta name="referrer" content="same-origin">');
  });

  test("/json/ without a session is 401 asking for one; HTTP Basic is not a session there", async () => {
    const none = await send(server, "GET", "/json/users/me");
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toBe("session");
    expect(none.json).toMatchObject({ result: "error", code: "UNAUTHORIZED" });
    const { email, apiKey } = server.owner.credentials!;
    const basic = `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}`;
    const withBasic = await send(server, "GET", "/json/users/me", { headers: { Authorization: basic } });
    expect(withBasic.status).toBe(401);
    expect(withBasic.headers["www-authenticate"]).toBe("session");
    const post = await send(server, "POST", "/json/messages", { headers: { Authorization: basic }, form: { type: "stream", to: "general", topic: "t", content: "x" } });
    expect(post.status).toBe(401);
    // A made-up session token is no session either.
    const forged = await send(server, "GET", "/json/users/me", { headers: { Cookie: `sessionid=${"A".repeat(43)}` } });
    expect(forged.status).toBe(401);
  });

  test("an unsafe /json/ request needs the CSRF token and this site's Origin; refused, nothing changes", async () => {
    const browser = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const form = { type: "stream", to: "general", topic: "csrf", content: "should not be sent" };
    const before = await server.owner.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [] });
    const noHeader = await send(server, "POST", "/json/messages", { form, headers: { Cookie: cookieHeader(browser) } });
    const wrongHeader = await send(server, "POST", "/json/messages", { form, headers: asBrowser(browser, { "X-CSRFToken": "A".repeat(43) }) });
    // Another session's token is not this one's.
    const other = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const otherToken = await send(server, "POST", "/json/messages", { form, headers: asBrowser(browser, { "X-CSRFToken": other.csrftoken }) });
    for (const res of [noHeader, wrongHeader, otherToken]) {
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({ result: "error", code: "CSRF_FAILED", reason: "CSRF token missing or incorrect." });
    }
    const wrongOrigin = await send(server, "POST", "/json/messages", { form, headers: asBrowser(browser, { Origin: "https://evil.example" }) });
    expect(wrongOrigin.status).toBe(403);
    expect(wrongOrigin.json).toMatchObject({ code: "CSRF_FAILED", reason: "Origin checking failed." });
    // Another origin is refused even reading.
    const crossRead = await send(server, "GET", "/json/users/me", { headers: { Cookie: cookieHeader(browser), Origin: "http://acme.chat.test" } });
    expect(crossRead.status).toBe(403);
    const after = await server.owner.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [] });
    expect(after.body.messages.map((m: { id: number }) => m.id)).toEqual(before.body.messages.map((m: { id: number }) => m.id));
    // With both (Origin this host), it is sent.
    const sent = await send(server, "POST", "/json/messages", { form, headers: asBrowser(browser, { Origin: "http://chat.test" }) });
    expect(sent.status).toBe(200);
    checkResponse("POST", "/api/v1/messages", sent.status, sent.json, sent.headers["content-type"]);
    const last = await server.owner.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [] });
    expect(last.body.messages[0]).toMatchObject({ id: sent.json.id, sender_id: ownerId });
  });

  test("/json/register and a /json/events long poll, with the session", async () => {
    const browser = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const registered = await send(server, "POST", "/json/register", { form: { event_types: JSON.stringify(["message"]) }, headers: asBrowser(browser) });
    expect(registered.status).toBe(200);
    expect(registered.json).toMatchObject({ result: "success", queue_id: expect.any(String) });
    const noCsrf = await send(server, "POST", "/json/register", { form: {}, headers: { Cookie: cookieHeader(browser) } });
    expect(noCsrf.status).toBe(403);
    const poll = send(server, "GET", "/json/events", { query: { queue_id: registered.json.queue_id, last_event_id: String(registered.json.last_event_id) }, headers: { Cookie: cookieHeader(browser) } });
    // The poll waits; a message sent meanwhile ends it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sent = await server.owner.post("/messages", { type: "stream", to: "general", topic: "long poll", content: "wake up" });
    const events = await poll;
    expect(events.status).toBe(200);
    checkResponse("GET", "/api/v1/events", events.status, events.json, events.headers["content-type"]);
    expect(events.json.events).toEqual([expect.objectContaining({ type: "message", message: expect.objectContaining({ id: sent.body.id }) })]);
    const deleted = await send(server, "DELETE", "/json/events", { form: { queue_id: registered.json.queue_id }, headers: asBrowser(browser) });
    expect(deleted.status).toBe(200);
  });

  test("logging out ends the session everywhere and clears the cookies; it needs the CSRF token", async () => {
    const browser = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const refused = await send(server, "POST", "/accounts/logout/", { headers: { Cookie: cookieHeader(browser) } });
    expect(refused.status).toBe(403);
    expect((await me(server, browser)).status).toBe(200);
    const out = await send(server, "POST", "/accounts/logout/", { headers: asBrowser(browser) });
    expect(out.status).toBe(302);
    expect(out.headers.location).toBe("/login");
    for (const name of ["sessionid", "csrftoken"]) {
      expect(cookieValue(out.cookies.get(name))).toBe("");
      expect(attributes(out.cookies.get(name)!)).toContain("max-age=0");
    }
    const after = await me(server, browser);
    expect(after.status).toBe(401);
    expect(after.headers["www-authenticate"]).toBe("session");
    // The form field works as well as the header.
    const second = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const viaForm = await send(server, "POST", "/accounts/logout/", { headers: { Cookie: cookieHeader(second) }, form: { csrfmiddlewaretoken: second.csrftoken } });
    expect(viaForm.status).toBe(302);
    expect((await me(server, second)).status).toBe(401);
    // Without a session there is nothing to end.
    expect((await send(server, "POST", "/accounts/logout/")).status).toBe(302);
  });

  test("deactivating a user ends their sessions at once", async () => {
    const member = await createMember(server, "deactivated.browser@example.com", "Dee Activated");
    const browser = await login(server, member.email, "member-pass");
    expect((await me(server, browser)).json.user_id).toBe(member.id);
    expect((await server.owner.delete(`/users/${member.id}`)).status).toBe(200);
    expect((await me(server, browser)).status).toBe(401);
    expect(await server.running.services.db.prisma.browserSession.count({ where: { user_id: member.id } })).toBe(0);
    // Logging in again says so only to someone who has the password.
    const again = await submitLogin(server, member.email, "member-pass");
    expect(again.status).toBe(200);
    expect(again.text).toContain("deactivated");
  });

  test("changing the password ends every session of the user", async () => {
    const member = await createMember(server, "password.browser@example.com", "Pat Word");
    const first = await login(server, member.email, "member-pass");
    const second = await login(server, member.email, "member-pass");
    const changed = await send(server, "PATCH", "/json/settings", { form: { old_password: "member-pass", new_password: "a-much-better-passphrase-9" }, headers: asBrowser(first) });
    expect(changed.status).toBe(200);
    expect((await me(server, first)).status).toBe(401);
    expect((await me(server, second)).status).toBe(401);
    expect((await login(server, member.email, "a-much-better-passphrase-9")).sessionid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test("a session of one organization opens nothing on another's host", async () => {
    const { services } = server.running;
    await services.actions.run(0, (tx, events) =>
      createRealm(tx, events, services.ctx, { subdomain: "cookies", name: "Cookies", owner: { email: OWNER_EMAIL, fullName: "Cookie Owner", password: "cookies-password" } }),
    );
    const root = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const there = await send(server, "GET", "/json/users/me", { host: "cookies.chat.test", headers: { Cookie: cookieHeader(root) } });
    expect(there.status).toBe(401);
    const own = await login(server, OWNER_EMAIL, "cookies-password", "cookies.chat.test");
    const ownMe = await me(server, own);
    expect(ownMe.json).toMatchObject({ full_name: "Cookie Owner" });
    expect((await send(server, "GET", "/json/users/me", { headers: { Cookie: cookieHeader(own) } })).status).toBe(401);
  });

  test("a session used after an hour is renewed for another 14 days, cookies included", async () => {
    const browser = await login(server, OWNER_EMAIL, OWNER_PASSWORD);
    const { prisma } = server.running.services.db;
    const rows = await prisma.browserSession.findMany({ where: { user_id: ownerId }, orderBy: { created_at: "desc" }, take: 1 });
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await prisma.browserSession.update({ where: { id: rows[0].id }, data: { last_used_at: twoHoursAgo, expires_at: new Date(twoHoursAgo.getTime() + 14 * 24 * 3600_000) } });
    const res = await me(server, browser);
    expect(res.status).toBe(200);
    expect(res.cookies.has("sessionid")).toBe(true);
    const renewed = await prisma.browserSession.findUniqueOrThrow({ where: { id: rows[0].id } });
    expect(renewed.expires_at.getTime()).toBeGreaterThan(Date.now() + 14 * 24 * 3600_000 - 60_000);
    // Not again within the hour.
    expect((await me(server, browser)).cookies.has("sessionid")).toBe(false);
    // An expired session opens nothing.
    await prisma.browserSession.update({ where: { id: rows[0].id }, data: { expires_at: new Date(Date.now() - 1000) } });
    expect((await me(server, browser)).status).toBe(401);
  });
});

describe.each(MODES)("browser login rate limits (%s)", (mode) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(mode, {
      RATE_LIMITING: "true",
      RATE_LIMIT_LOGIN_FAILURES_PER_ACCOUNT: "3",
      RATE_LIMIT_LOGIN_FAILURES_PER_IP: "100",
      RATE_LIMIT_IP_REQUESTS_PER_MINUTE: "1000",
      RATE_LIMIT_LOGIN_WINDOW_SECONDS: "600",
    });
  });
  afterAll(() => server.stop());

  test("failed logins count as POST /fetch_api_key's: past them, 429 even with the right password", async () => {
    for (let i = 0; i < 3; i++) expect((await submitLogin(server, OWNER_EMAIL, `wrong-${i}`)).status).toBe(200);
    const limited = await submitLogin(server, OWNER_EMAIL, OWNER_PASSWORD);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expect(limited.cookies.has("sessionid")).toBe(false);
    // The same counter as the API's login.
    const api = await server.anonymous.post("/fetch_api_key", { username: OWNER_EMAIL, password: OWNER_PASSWORD });
    expect(api.status).toBe(429);
  });
});

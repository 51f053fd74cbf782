// An invitation end to end, as people meet it: an administrator invites an address through the
// API; the invitation email is queued by the API, sent by a REAL worker process over SMTP to a
// real SMTP server the test starts; the link in it is followed as a browser does (the form page,
// its CSRF cookie, the post), which creates the account, logs the browser in (/json/ answers for
// the new user) and sends it to the web client; then the new account logs in with its password,
// both through POST /fetch_api_key and the login form. Postgres + Redis with the API and worker
// as separate processes, and the embedded trial (one process, PGlite) likewise.
import http from "node:http";
import request from "supertest";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { startSmtpServer, type ReceivedEmail, type TestSmtpServer } from "../support/smtp-server.ts";
import { useTierProcesses } from "../support/tier-processes.ts";
import { ApiClient } from "../support/client.ts";

jest.setTimeout(180_000);

const PASSWORD = "Fresh-Invitee-Pass-42";

function smtpSettings(smtp: TestSmtpServer): Record<string, string> {
  return { EMAIL_HOST: smtp.host, EMAIL_PORT: String(smtp.port), EMAIL_USE_TLS: "false", EXTERNAL_HOST: "chat.test" };
}

function joinLinkIn(email: ReceivedEmail): string {
  const match = /https?:\/\/\S+\/join\/[a-z2-7]{24}\//.exec(email.text);
  if (!match) throw new Error(`no invitation link in: ${email.text}`);
  return match[0];
}

function cookieValue(res: request.Response, name: string): string | undefined {
  const cookies = (res.headers["set-cookie"] as unknown as string[] | undefined) ?? [];
  const found = cookies.find((c) => c.startsWith(`${name}=`));
  return found === undefined ? undefined : /^[^=]+=([^;]*)/.exec(found)![1];
}

/** A GET as the browser sends it to /json/ (which the API document, under /api/v1, does not list: plain http). */
function getJson(url: string, cookie: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { Cookie: cookie } }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      })
      .on("error", reject);
  });
}

async function waitFor(what: string, probe: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The whole flow against the API at `baseUrl`, the owner inviting through `owner`. */
async function inviteRegisterAndLogIn(baseUrl: string, owner: ApiClient, smtp: TestSmtpServer, address: string): Promise<void> {
  const before = smtp.received.length;
  const sent = await owner.post("/invites", { invitee_emails: address, stream_ids: "[]", include_realm_default_subscriptions: true });
  expect(sent.body).toEqual({ result: "success", msg: "" });
  const [email] = (await smtp.waitForEmails(before + 1, 60_000)).slice(before);
  expect(email.rcptTo).toEqual([address]);
  expect(email.mailFrom).toBe("noreply@chat.test");
  expect(email.headers.subject).toMatch(/invited you to join Team Chat$/);
  const link = joinLinkIn(email);
  expect(link.startsWith("http://chat.test/join/")).toBe(true);
  const path = new URL(link).pathname;

  // The browser opens the link: a form and its CSRF cookie.
  const form = await request(baseUrl).get(path);
  expect(form.status).toBe(200);
  expect(form.text).toContain(address);
  const csrf = cookieValue(form, "csrftoken")!;
  expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
  const hidden = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(form.text)![1];
  expect(hidden).toBe(csrf);

  // It posts the form: the account is made, the browser logged in and sent to the web client.
  const created = await request(baseUrl)
    .post(path)
    .set("Cookie", `csrftoken=${csrf}`)
    .set("Origin", new URL(baseUrl).origin)
    .type("form")
    .send({ full_name: "Ivy Invitee", password: PASSWORD, password_confirm: PASSWORD, csrfmiddlewaretoken: hidden });
  expect(created.status).toBe(302);
  expect(created.headers.location).toBe("/");
  const session = cookieValue(created, "sessionid")!;
  const sessionCsrf = cookieValue(created, "csrftoken")!;
  expect(session).toBeTruthy();
  const me = await getJson(`${baseUrl}/json/users/me`, `sessionid=${session}; csrftoken=${sessionCsrf}`);
  expect(me.status).toBe(200);
  expect(me.body).toMatchObject({ result: "success", full_name: "Ivy Invitee", delivery_email: address, role: 400 });

  // The link works once.
  const again = await request(baseUrl).get(path);
  expect(again.status).toBe(400);
  expect(again.text).toContain("The invitation link has already been used.");

  // The new account logs in with its password: the API, and the login form.
  const key = await request(baseUrl).post("/api/v1/fetch_api_key").type("form").send({ username: address, password: PASSWORD });
  expect(key.status).toBe(200);
  const invitee = new ApiClient(baseUrl, { email: address, apiKey: key.body.api_key });
  const subs = (await invitee.get("/users/me/subscriptions")).body.subscriptions.map((s: { name: string }) => s.name);
  expect(subs).toContain("general");
  const loginPage = await request(baseUrl).get("/login");
  const loginCsrf = cookieValue(loginPage, "csrftoken")!;
  const login = await request(baseUrl)
    .post("/accounts/login/")
    .set("Cookie", `csrftoken=${loginCsrf}`)
    .type("form")
    .send({ username: address, password: PASSWORD, csrfmiddlewaretoken: loginCsrf });
  expect(login.status).toBe(302);
  expect(cookieValue(login, "sessionid")).toBeTruthy();

  // The owner's list no longer has it; the owner got the Notification Bot's note.
  expect((await owner.get("/invites")).body.invites.map((i: { email?: string }) => i.email)).not.toContain(address);
  const messages = (await owner.get("/messages", { anchor: "newest", num_before: 5, num_after: 0 })).body.messages;
  expect(messages.some((m: { content: string }) => m.content.includes("accepted your invitation"))).toBe(true);
}

describe("an invitation by email, sent by a worker process (Postgres, Redis, real processes)", () => {
  let smtp: TestSmtpServer;
  const tiers = useTierProcesses({ EXTERNAL_HOST: "chat.test" });
  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await smtp?.close();
  });

  test("the email arrives, its link registers the account, which then logs in", async () => {
    const settings = smtpSettings(smtp);
    const api = await tiers.start("api", settings);
    const baseUrl = `http://127.0.0.1:${api.port}`;
    const owner = await tiers.owner(api);
    // No worker yet: the invitation waits in the queue, and nothing is sent.
    expect((await owner.post("/invites", { invitee_emails: "queued.first@example.com", stream_ids: "[]" })).body.result).toBe("success");
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.received).toHaveLength(0);
    const worker = await tiers.start("worker", settings);
    const [queued] = await smtp.waitForEmails(1, 60_000);
    expect(queued.rcptTo).toEqual(["queued.first@example.com"]);
    await waitFor("the worker's log of the send", () => worker.output().includes('"message":"email sent"'));

    await inviteRegisterAndLogIn(baseUrl, owner, smtp, "ivy.invitee@example.com");
  });
});

describe("an invitation by email in the embedded trial (one real process, PGlite)", () => {
  let smtp: TestSmtpServer;
  let server: ServerProcess | null = null;
  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
  });

  test("the email arrives, its link registers the account, which then logs in", async () => {
    server = await startProcess({
      ROLE: "all",
      PORT: "0",
      BIND_ADDRESS: "127.0.0.1",
      DATA_DIR: "memory://",
      DEV_MODE: "true",
      BOOTSTRAP_OWNER_EMAIL: "owner@example.com",
      BOOTSTRAP_OWNER_PASSWORD: "owner-password",
      ...smtpSettings(smtp),
    });
    const baseUrl = `http://127.0.0.1:${server.port}`;
    const key = await new ApiClient(baseUrl, null).post("/dev_fetch_api_key", { username: "owner@example.com" });
    const owner = new ApiClient(baseUrl, { email: "owner@example.com", apiKey: key.body.api_key });
    await inviteRegisterAndLogIn(baseUrl, owner, smtp, "embedded.invitee@example.com");
  });
});

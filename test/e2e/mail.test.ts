// Outgoing email as a component, against a real SMTP server the test starts (smtp-server on a
// spare loopback port): a password reset asked for on the web form is queued by the API, sent by
// the worker tier over SMTP (with SMTP AUTH, in clear as EMAIL_USE_TLS=false says), and its link
// sets the password once. A refused attempt is tried again; a 5xx is not; a worker killed in the
// middle of a send loses no email (Redis, BullMQ's stalled jobs, real processes); and a server
// without EMAIL_HOST writes the email to its log, where the link works just the same.
import request from "supertest";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { MODES, OWNER_EMAIL, startTestServer, type TestServer } from "../support/server.ts";
import { resetLinkIn, startSmtpServer, type TestSmtpServer } from "../support/smtp-server.ts";
import { useTierProcesses, TIER_OWNER_EMAIL } from "../support/tier-processes.ts";
import { createMember } from "../support/users.ts";

jest.setTimeout(120_000);

const SMTP_LOGIN = { user: "mailer", password: "mailer-secret" };

function smtpSettings(smtp: TestSmtpServer): Record<string, string> {
  return {
    EMAIL_HOST: smtp.host,
    EMAIL_PORT: String(smtp.port),
    EMAIL_USE_TLS: "false",
    EMAIL_HOST_USER: SMTP_LOGIN.user,
    EMAIL_HOST_PASSWORD: SMTP_LOGIN.password,
  };
}

/** POST /accounts/password/reset/ on the server at `baseUrl`, as a browser's form. */
async function askForReset(baseUrl: string, email: string): Promise<void> {
  const res = await request(baseUrl).post("/accounts/password/reset/").type("form").send({ email });
  expect(res.status).toBe(200);
  expect(res.text).toContain("Check your email");
}

async function setPassword(baseUrl: string, path: string, password: string): Promise<request.Response> {
  return request(baseUrl).post(path).type("form").send({ new_password: password, new_password_confirm: password });
}

async function loginStatus(baseUrl: string, username: string, password: string): Promise<number> {
  return (await request(baseUrl).post("/api/v1/fetch_api_key").type("form").send({ username, password })).status;
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(MODES)("password reset by email over SMTP (%s)", (mode) => {
  let smtp: TestSmtpServer;
  let server: TestServer;

  beforeAll(async () => {
    smtp = await startSmtpServer({ login: SMTP_LOGIN });
    server = await startTestServer(mode, smtpSettings(smtp));
  });
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
  });
  beforeEach(() => {
    smtp.answer = () => "accept";
  });

  test("the form queues an email the worker sends; its link sets the password once", async () => {
    const user = await createMember(server, "reset.me@example.com", "Reese Reset");
    const before = smtp.received.length;
    await askForReset(server.baseUrl, "Reset.Me@example.com");
    const [email] = (await smtp.waitForEmails(before + 1)).slice(before);
    expect(email.mailFrom).toBe("noreply@chat.test");
    expect(email.rcptTo).toEqual([user.email]);
    expect(email.user).toBe(SMTP_LOGIN.user);
    expect(email.headers).toMatchObject({ subject: "Reset your password for Team Chat", to: user.email, "auto-submitted": "auto-generated" });
    expect(email.headers.from).toBe("Team Chat account security <noreply@chat.test>");
    expect(email.text).toContain(`the password of ${user.email} on Team Chat (http://chat.test)`);
    const link = resetLinkIn(email);
    expect(link).toMatch(/^http:\/\/chat\.test\/accounts\/password\/reset\/[A-Za-z0-9_-]{43}\/$/);
    const path = new URL(link).pathname;

    const page = await request(server.baseUrl).get(path);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<strong>${user.email}</strong>`);
    const done = await setPassword(server.baseUrl, path, "Mailed-Reset-2024");
    expect(done.status).toBe(200);
    expect(done.text).toContain("Your password is set");
    expect(await loginStatus(server.baseUrl, user.email, "Mailed-Reset-2024")).toBe(200);
    expect(await loginStatus(server.baseUrl, user.email, "member-pass")).toBe(401);

    const twice = await setPassword(server.baseUrl, path, "Second-Try-2025");
    expect(twice.status).toBe(400);
    expect(twice.text).toContain("This link has been used");
    expect(await loginStatus(server.baseUrl, user.email, "Second-Try-2025")).toBe(401);
  });

  test("an address without an account, or with a deactivated one, gets a note without a link", async () => {
    const gone = await createMember(server, "gone@example.com", "Gus Gone");
    expect((await server.owner.delete(`/users/${gone.id}`)).body.result).toBe("success");
    const before = smtp.received.length;
    await askForReset(server.baseUrl, "stranger@example.com");
    await askForReset(server.baseUrl, "gone@example.com");
    const emails = (await smtp.waitForEmails(before + 2)).slice(before);
    const byRecipient = Object.fromEntries(emails.map((e) => [e.rcptTo[0], e]));
    expect(byRecipient["stranger@example.com"].text).toContain("there is no account with that address there");
    expect(byRecipient["gone@example.com"].text).toContain("the account with that address is deactivated");
    for (const email of emails) {
      expect(email.headers.subject).toBe("Password reset for Team Chat");
      expect(email.text).not.toMatch(/accounts\/password\/reset\/\S/);
    }
    expect(await server.running.services.db.prisma.passwordResetToken.count({ where: { user_id: gone.id } })).toBe(0);
  });

  test("an SMTP server that refuses for now (451) gets the email again after the backoff, once", async () => {
    const first = smtp.attempts + 1;
    smtp.answer = (attempt) => (attempt === first ? { code: 451, message: "4.3.0 Try again later" } : "accept");
    const before = smtp.received.length;
    const asked = Date.now();
    await askForReset(server.baseUrl, OWNER_EMAIL);
    const [email] = (await smtp.waitForEmails(before + 1)).slice(before);
    expect(email.rcptTo).toEqual([OWNER_EMAIL]);
    expect(smtp.attempts).toBe(first + 1);
    // The first retry waits EMAIL_BACKOFF_MS (2 s).
    expect(email.at - asked).toBeGreaterThanOrEqual(1900);
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.received.length).toBe(before + 1);
  });

  test("a permanent refusal (550) is not tried again", async () => {
    const first = smtp.attempts + 1;
    smtp.answer = (attempt) => (attempt === first ? { code: 550, message: "5.1.1 No such mailbox" } : "accept");
    const before = smtp.received.length;
    await askForReset(server.baseUrl, "bounces@example.com");
    await smtp.waitForAttempts(first);
    // Past the first backoff (2 s): a retry would have come.
    await new Promise((r) => setTimeout(r, 3000));
    expect(smtp.attempts).toBe(first);
    expect(smtp.received.length).toBe(before);
  });
});

describe("EMAIL_USE_TLS=true never falls back to a send in clear", () => {
  let smtp: TestSmtpServer;
  let server: TestServer;
  beforeAll(async () => {
    smtp = await startSmtpServer({ login: SMTP_LOGIN });
    server = await startTestServer(MODES[0], { ...smtpSettings(smtp), EMAIL_USE_TLS: "true" });
  });
  afterAll(async () => {
    await server?.stop();
    await smtp?.close();
  });

  test("a server that offers no STARTTLS gets neither the login nor the email", async () => {
    await askForReset(server.baseUrl, OWNER_EMAIL);
    // The first attempt and its retry after 2 s both connect, and both stop before AUTH.
    await waitFor("two connections", () => (smtp.connections >= 2 ? true : undefined), 10_000);
    expect(smtp.logins).toBe(0);
    expect(smtp.attempts).toBe(0);
    expect(smtp.received).toEqual([]);
  });
});

describe("a worker killed in the middle of a send loses no email (Postgres, Redis, real processes)", () => {
  let smtp: TestSmtpServer;
  const tiers = useTierProcesses({ JOB_STALL_SECONDS: "2", EXTERNAL_HOST: "chat.test" });
  beforeAll(async () => {
    smtp = await startSmtpServer({ login: SMTP_LOGIN });
  });
  afterAll(async () => {
    await smtp?.close();
  });

  test("the job runs again on another worker once its lock lapses, and the email arrives once", async () => {
    const settings = smtpSettings(smtp);
    const [api, worker] = await Promise.all([tiers.start("api", settings), tiers.start("worker", settings)]);
    const baseUrl = `http://127.0.0.1:${api.port}`;
    // The first attempt is held: the SMTP server never answers its MAIL FROM.
    smtp.answer = (attempt) => (attempt === 1 ? "hang" : "accept");
    await askForReset(baseUrl, TIER_OWNER_EMAIL);
    await smtp.waitForAttempts(1);
    await worker.kill();
    const replacement = await tiers.start("worker", settings);
    const [email] = await smtp.waitForEmails(1, 30_000);
    expect(email.rcptTo).toEqual([TIER_OWNER_EMAIL]);
    expect(smtp.attempts).toBe(2);
    expect(replacement.output()).not.toContain("gave up sending an email");

    const path = new URL(resetLinkIn(email)).pathname;
    expect((await setPassword(baseUrl, path, "Survived-Crash-77")).status).toBe(200);
    expect(await loginStatus(baseUrl, TIER_OWNER_EMAIL, "Survived-Crash-77")).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.received).toHaveLength(1);
  });
});

describe("without EMAIL_HOST the email is written to the log (the embedded trial, a real process)", () => {
  let server: ServerProcess | null = null;
  afterAll(async () => {
    await server?.stop();
  });

  test("the worker logs the email at info level, and its link works", async () => {
    server = await startProcess({
      ROLE: "all",
      PORT: "0",
      BIND_ADDRESS: "127.0.0.1",
      DATA_DIR: "memory://",
      EXTERNAL_HOST: "chat.test",
      BOOTSTRAP_OWNER_EMAIL: "owner@example.com",
      BOOTSTRAP_OWNER_PASSWORD: "owner-password",
    });
    const baseUrl = `http://127.0.0.1:${server.port}`;
    expect(server.output()).toContain("EMAIL_HOST is not set: emails (password resets, invitations) are written to this log, not sent");
    await askForReset(baseUrl, "owner@example.com");
    const line = await waitFor("the logged email", () =>
      server!
        .output()
        .split("\n")
        .find((l) => l.includes("email not sent")),
    );
    const logged = JSON.parse(line) as Record<string, string>;
    expect(logged).toMatchObject({ level: "info", to: "owner@example.com", from: "Team Chat account security <noreply@chat.test>", subject: "Reset your password for Team Chat" });
    const match = /http:\/\/chat\.test(\/accounts\/password\/reset\/[A-Za-z0-9_-]{43}\/)/.exec(logged.body);
    expect(match).not.toBeNull();
    expect((await setPassword(baseUrl, match![1], "From-The-Log-55")).status).toBe(200);
    expect(await loginStatus(baseUrl, "owner@example.com", "From-The-Log-55")).toBe(200);
  });
});

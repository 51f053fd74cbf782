// A user's own password through PATCH /settings (Zulip 3.x's json_change_settings: its checks,
// order and words), and the reset link's pages (GET and POST /accounts/password/reset/<token>/):
// a strong new password is the one POST /fetch_api_key then takes, every refusal changes nothing,
// a link works once and not after it expires or the password was set another way, and the pages
// are strict HTML (escaped values, a Content-Security-Policy, no script).
import request from "supertest";
import { createPasswordResetLink, verifyPassword } from "@chat/core";
import { OWNER_EMAIL, OWNER_PASSWORD, MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createMember, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

const STRONG = "Correct-Horse-42";

async function login(server: TestServer, username: string, password: string): Promise<{ status: number; apiKey?: string; msg?: string }> {
  const res = await server.anonymous.post("/fetch_api_key", { username, password });
  return { status: res.status, apiKey: res.body.api_key, msg: res.body.msg };
}

/** A reset link for `email`'s account, made by the action the CLI calls; its path from the root. */
async function resetLink(server: TestServer, email: string): Promise<{ url: string; path: string; token: string }> {
  const { prisma } = server.running.services.db;
  const user = await prisma.userProfile.findFirstOrThrow({ where: { delivery_email: email } });
  const realm = await prisma.realm.findUniqueOrThrow({ where: { id: user.realm_id } });
  const { url } = await server.running.services.actions.run(realm.id, (tx) => createPasswordResetLink(tx, { externalHost: "chat.test", protocol: "https" }, realm, user));
  const path = new URL(url).pathname;
  return { url, path, token: path.split("/")[4] };
}

describe.each(MODES)("passwords (%s)", (mode) => {
  let server: TestServer;
  let count = 0;
  /** A member of their own, with password "member-pass". */
  const member = (): Promise<TestUser> => createMember(server, `pw${++count}@example.com`, `Pat Password ${count}`);

  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  describe("PATCH /settings", () => {
    test("a right old password and a strong new one: the new one logs in, the old one no longer", async () => {
      const user = await member();
      const res = await user.client.patch("/settings", { old_password: "member-pass", new_password: STRONG });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: "success", msg: "" });
      const fresh = await login(server, user.email, STRONG);
      expect(fresh.status).toBe(200);
      expect(fresh.apiKey).toBe(user.client.credentials!.apiKey);
      expect(await login(server, user.email, "member-pass")).toMatchObject({ status: 401, msg: "Your username or password is incorrect" });
    });

    test("a wrong old password is Zulip's 'Wrong password!' and the password stays", async () => {
      const user = await member();
      for (const old_password of ["not-my-pass", "", "MEMBER-PASS"]) {
        const res = await user.client.patch("/settings", { old_password, new_password: STRONG });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: "error", msg: "Wrong password!", code: "BAD_REQUEST" });
      }
      expect((await login(server, user.email, "member-pass")).status).toBe(200);
      expect((await login(server, user.email, STRONG)).status).toBe(401);
    });

    test.each([["12345"], ["123456"], ["password1"], ["aaaaaaaaaa"], ["qwerty123"], ["abcabcabc"]])("a weak new password (%s) is refused after the old one is checked", async (weak) => {
      const user = await member();
      const res = await user.client.patch("/settings", { old_password: "member-pass", new_password: weak });
      expect(res.body).toEqual({ result: "error", msg: "New password is too weak!", code: "BAD_REQUEST" });
      // Zulip's order: a wrong old password is said first.
      expect((await user.client.patch("/settings", { old_password: "wrong-pass", new_password: weak })).body.msg).toBe("Wrong password!");
      expect((await login(server, user.email, "member-pass")).status).toBe(200);
    });

    test("a new password is at most 100 characters (Zulip's forms' bound); 100 is taken", async () => {
      const user = await member();
      const long = `${"Long-Pass-9".repeat(10)}x`;
      expect(long.length).toBe(111);
      const refused = await user.client.patch("/settings", { old_password: "member-pass", new_password: long.slice(0, 101) });
      expect(refused.body).toEqual({ result: "error", msg: "new_password is too long (limit: 100 characters)", code: "BAD_REQUEST", var_name: "new_password" });
      const taken = await user.client.patch("/settings", { old_password: "member-pass", new_password: long.slice(0, 100) });
      expect(taken.body.result).toBe("success");
      expect((await login(server, user.email, long.slice(0, 100))).status).toBe(200);
    });

    test("an empty new_password asks for no change: alone (or with nothing) it is 'Please fill out all fields.'", async () => {
      const user = await member();
      for (const params of [{}, { old_password: "member-pass" }, { old_password: "member-pass", new_password: "" }, { full_name: "", email: "" }]) {
        const res = await user.client.patch("/settings", params);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ result: "error", msg: "Please fill out all fields.", code: "BAD_REQUEST" });
      }
      expect((await login(server, user.email, "member-pass")).status).toBe(200);
    });

    test("a bot cannot change a password, even knowing it", async () => {
      const user = await member();
      await server.running.services.db.prisma.userProfile.update({ where: { id: user.id }, data: { is_bot: true, bot_type: 1 } });
      const res = await user.client.patch("/settings", { old_password: "member-pass", new_password: STRONG });
      expect(res.body).toEqual({ result: "error", msg: "This endpoint does not accept bot requests.", code: "BAD_REQUEST" });
      const row = await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: user.id } });
      expect(row.password_hash).not.toBeNull();
      await server.running.services.db.prisma.userProfile.update({ where: { id: user.id }, data: { is_bot: false, bot_type: null } });
      expect((await login(server, user.email, "member-pass")).status).toBe(200);
    });

    test("a refusal after the password check (an email change) leaves the password and the name as they were", async () => {
      const user = await member();
      const res = await user.client.patch("/settings", { old_password: "member-pass", new_password: STRONG, email: "elsewhere@example.com", full_name: "New Name" });
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(/^Email address changes are not available on this server/);
      expect((await login(server, user.email, "member-pass")).status).toBe(200);
      expect((await user.client.get("/users/me")).body.full_name).toBe(`Pat Password ${count}`);
      // The current address is no change.
      expect((await user.client.patch("/settings", { email: user.email })).body).toEqual({ result: "success", msg: "" });
    });

    test("full_name: changed with its realm_user event, and answered as Zulip does", async () => {
      const user = await member();
      const events = await verifyAction(user.client, ["realm_user"], async () => {
        const res = await user.client.patch("/settings", { full_name: "  Renamed Person " });
        expect(res.body).toEqual({ result: "success", msg: "", full_name: "Renamed Person" });
      });
      expect(events).toEqual([expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: user.id, full_name: "Renamed Person" } })]);
      expect((await user.client.patch("/settings", { full_name: "x".repeat(101) })).body.msg).toBe("Name too long!");
    });

    test("changing the password uses up the user's outstanding reset links", async () => {
      const user = await member();
      const link = await resetLink(server, user.email);
      expect((await request(server.baseUrl).get(link.path)).status).toBe(200);
      expect((await user.client.patch("/settings", { old_password: "member-pass", new_password: STRONG })).body.result).toBe("success");
      const page = await request(server.baseUrl).get(link.path);
      expect(page.status).toBe(400);
      expect(page.text).toContain("This link has been used");
    });
  });

  describe("asking for a reset link", () => {
    const ask = (fields: Record<string, string>) => request(server.baseUrl).post("/accounts/password/reset/").type("form").send(fields);

    test("the form, and the same answer whether or not the address has an account", async () => {
      const form = await request(server.baseUrl).get("/accounts/password/reset/");
      expect(form.status).toBe(200);
      expect(form.text).toMatch(/<input type="email" id="email" name="email"/);
      expect(form.headers["content-security-policy"]).toContain("default-src 'none'");

      const user = await member();
      const { prisma } = server.running.services.db;
      const known = await ask({ email: ` ${user.email.toUpperCase()} ` });
      const unknown = await ask({ email: "nobody-here@example.com" });
      expect([known.status, unknown.status]).toEqual([200, 200]);
      expect(known.text.replace(user.email.toUpperCase(), "ADDRESS")).toBe(unknown.text.replace("nobody-here@example.com", "ADDRESS"));
      expect(known.text).toContain("Check your email");
      expect(await prisma.passwordResetToken.count({ where: { user_id: user.id } })).toBe(1);
    });

    test("an address that is not one gets the form again, its value escaped", async () => {
      for (const email of ["", "not an address", '"><script>x</script>@x']) {
        const res = await ask({ email });
        expect(res.status).toBe(400);
        expect(res.text).toContain("Enter a valid email address.");
        expect(res.text).not.toContain("<script>");
      }
      const long = await ask({ email: `${"a".repeat(250)}@example.com` });
      expect(long.status).toBe(400);
      expect(long.body).toEqual({ result: "error", msg: "Enter a valid email address.", code: "BAD_REQUEST" });
    });
  });

  describe("the reset link's pages", () => {
    test("the link is the realm's URL, https as asked, and its page is a strict, escaped form", async () => {
      const user = await member();
      await server.owner.patch("/realm", { name: 'Team <script>alert("x")</script>' });
      const link = await resetLink(server, user.email);
      expect(link.url).toMatch(/^https:\/\/chat\.test\/accounts\/password\/reset\/[A-Za-z0-9_-]{43}\/$/);
      const page = await request(server.baseUrl).get(link.path);
      expect(page.status).toBe(200);
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(page.headers["content-security-policy"]).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/);
      expect(page.headers).toMatchObject({ "x-frame-options": "DENY", "referrer-policy": "no-referrer", "cache-control": "no-store", "x-content-type-options": "nosniff" });
      expect(page.text).not.toMatch(/<script/i);
      expect(page.text).toContain("Team &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
      expect(page.text).toContain(`<strong>${user.email}</strong>`);
      expect(page.text).toMatch(/<form method="post" action="">/);
      // Only a hash of the token is stored.
      const rows = await server.running.services.db.prisma.passwordResetToken.findMany({ where: { user_id: user.id } });
      expect(rows).toHaveLength(1);
      expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(rows[0].token_hash).not.toContain(link.token);
      expect(rows[0].expires_at.getTime() - rows[0].created_at.getTime()).toBeGreaterThan(23.9 * 3600 * 1000);
      await server.owner.patch("/realm", { name: "Team Chat" });
    });

    test("mismatched or weak passwords show the form again and keep the link; a good one is set once", async () => {
      const user = await member();
      const link = await resetLink(server, user.email);
      const post = (fields: Record<string, string>) => request(server.baseUrl).post(link.path).type("form").send(fields);

      const mismatch = await post({ new_password: STRONG, new_password_confirm: `${STRONG}!` });
      expect(mismatch.status).toBe(400);
      expect(mismatch.text).toContain("The two passwords do not match.");
      const weak = await post({ new_password: "password1", new_password_confirm: "password1" });
      expect(weak.status).toBe(400);
      expect(weak.text).toContain("The password is too weak");
      const short = await post({ new_password: "abc", new_password_confirm: "abc" });
      expect(short.text).toContain("The password is too short");
      expect((await login(server, user.email, "member-pass")).status).toBe(200);

      const done = await post({ new_password: STRONG, new_password_confirm: STRONG });
      expect(done.status).toBe(200);
      expect(done.text).toContain("Your password is set");
      expect(done.headers["content-security-policy"]).toContain("default-src 'none'");
      expect((await login(server, user.email, STRONG)).status).toBe(200);
      expect((await login(server, user.email, "member-pass")).status).toBe(401);

      const again = await post({ new_password: "Another-Pass-77", new_password_confirm: "Another-Pass-77" });
      expect(again.status).toBe(400);
      expect(again.text).toContain("This link has been used");
      expect((await login(server, user.email, STRONG)).status).toBe(200);
      expect((await request(server.baseUrl).get(link.path)).status).toBe(400);
    });

    test("a new link for one user uses up none of another's; setting the password uses up all of the user's", async () => {
      const user = await member();
      const other = await member();
      const [first, second, others] = [await resetLink(server, user.email), await resetLink(server, user.email), await resetLink(server, other.email)];
      const set = await request(server.baseUrl).post(second.path).type("form").send({ new_password: STRONG, new_password_confirm: STRONG });
      expect(set.status).toBe(200);
      expect((await request(server.baseUrl).get(first.path)).status).toBe(400);
      expect((await request(server.baseUrl).get(others.path)).status).toBe(200);
    });

    test("two submissions of one link at once: one sets the password, the other finds it used", async () => {
      const user = await member();
      const link = await resetLink(server, user.email);
      const submit = (password: string) => request(server.baseUrl).post(link.path).type("form").send({ new_password: password, new_password_confirm: password });
      const answers = await Promise.all([submit("First-Pass-1234"), submit("Second-Pass-5678")]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
      const winner = answers[0].status === 200 ? "First-Pass-1234" : "Second-Pass-5678";
      expect((await login(server, user.email, winner)).status).toBe(200);
    });

    test("an expired link, an unknown one and one for a deactivated account each get their page", async () => {
      const user = await member();
      const expired = await resetLink(server, user.email);
      await server.running.services.db.prisma.passwordResetToken.updateMany({ where: { user_id: user.id }, data: { expires_at: new Date(Date.now() - 1000) } });
      const late = await request(server.baseUrl).post(expired.path).type("form").send({ new_password: STRONG, new_password_confirm: STRONG });
      expect(late.status).toBe(400);
      expect(late.text).toContain("This link has expired");
      expect((await login(server, user.email, "member-pass")).status).toBe(200);

      for (const path of ["/accounts/password/reset/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/", "/accounts/password/reset/short/", "/accounts/password/reset/%3Cb%3E%00/"]) {
        const page = await request(server.baseUrl).get(path);
        expect(page.status).toBe(404);
        expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
        expect(page.text).toContain("This link is not valid");
      }

      const deactivated = await member();
      const link = await resetLink(server, deactivated.email);
      expect((await server.owner.delete(`/users/${deactivated.id}`)).body.result).toBe("success");
      const page = await request(server.baseUrl).post(link.path).type("form").send({ new_password: STRONG, new_password_confirm: STRONG });
      expect(page.status).toBe(400);
      expect(page.text).toContain("This account is deactivated");
    });

    test("a link of another organization is unknown here", async () => {
      const user = await member();
      const link = await resetLink(server, user.email);
      const { prisma } = server.running.services.db;
      const owner = await prisma.userProfile.findFirstOrThrow({ where: { email: OWNER_EMAIL } });
      await server.running.services.actions.run(owner.realm_id, (tx) => tx.realm.create({ data: { string_id: `other${mode}`, name: "Other" } }));
      const page = await request(server.baseUrl).get(link.path).set("Host", `other${mode}.chat.test`);
      expect(page.status).toBe(404);
      expect((await login(server, OWNER_EMAIL, OWNER_PASSWORD)).status).toBe(200);
    });
  });
});

describe.each(MODES)("password rate limits (%s)", (mode) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(mode, {
      RATE_LIMITING: "true",
      RATE_LIMIT_LOGIN_FAILURES_PER_ACCOUNT: "3",
      RATE_LIMIT_LOGIN_FAILURES_PER_IP: "50",
      RATE_LIMIT_LOGIN_WINDOW_SECONDS: "600",
    });
  });
  afterAll(() => server.stop());

  test("wrong old passwords are failed logins: past the account's limit even the right one waits, and so does the login", async () => {
    const user = await createMember(server, "throttled@example.com", "Theo Throttled");
    const bystander = await createMember(server, "bystander@example.com", "Bea Bystander");
    for (let i = 0; i < 3; i++) expect((await user.client.patch("/settings", { old_password: `guess-${i}`, new_password: STRONG })).body.msg).toBe("Wrong password!");
    const res = await user.client.patch("/settings", { old_password: "member-pass", new_password: STRONG });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: expect.stringMatching(/^You're making too many attempts! Try again in \d+ seconds\.$/), code: "BAD_REQUEST" });
    const seconds = Number(/in (\d+) seconds/.exec(res.body.msg)![1]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(600);
    // The counter is the login's (Zulip's authenticate_by_username): the right password waits there too.
    expect((await server.anonymous.post("/fetch_api_key", { username: user.email, password: "member-pass" })).status).toBe(429);
    // Nothing changed, and another account is not held back.
    const hash = (await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: user.id } })).password_hash;
    expect(await verifyPassword(hash, "member-pass")).toBe(true);
    expect((await bystander.client.patch("/settings", { old_password: "member-pass", new_password: STRONG })).body.result).toBe("success");
  });

  test("reset emails: 2 an hour to one address, 5 a day asked from one client address (Zulip's limits)", async () => {
    const ask = (email: string, ip: string) => request(server.baseUrl).post("/accounts/password/reset/").set("X-Forwarded-For", ip).type("form").send({ email });
    expect((await ask(OWNER_EMAIL, "203.0.113.1")).status).toBe(200);
    expect((await ask(OWNER_EMAIL.toUpperCase(), "203.0.113.2")).status).toBe(200);
    const third = await ask(OWNER_EMAIL, "203.0.113.3");
    expect(third.status).toBe(429);
    expect(third.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(third.text).toContain("Too many password reset emails");
    expect(Number(third.headers["retry-after"])).toBeGreaterThan(0);
    expect(Number(third.headers["retry-after"])).toBeLessThanOrEqual(3600);

    for (let i = 0; i < 5; i++) expect((await ask(`nobody${i}@example.com`, "198.51.100.7")).status).toBe(200);
    expect((await ask("nobody5@example.com", "198.51.100.7")).status).toBe(429);
    // Another client may still ask for that address.
    expect((await ask("nobody5@example.com", "198.51.100.8")).status).toBe(200);
  });
});

// How long polls are authenticated (poll-auth.ts, actor-validity.ts): on Postgres a copy of a user
// that a statement found current is trusted with no statement until a notification on actor_rows
// names its user or realm, and nothing is trusted while that channel's connection is down; on
// PGlite every poll's copy is checked, as before.
import { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import { Client } from "pg";
import { NEVER_VALID } from "@chat/core";
import { ACTOR_ROW_LISTENER_NAME, type PollAuthenticator, type PollAuthStats } from "@chat/app-events";
import { actorRowNotified, actorRowsSettled, nextValidityEvent, notifiedValidity } from "../support/actor-rows.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

const describeOnPostgres = MODES.includes("postgres") ? describe : describe.skip;
const describeEmbedded = MODES.includes("embedded") ? describe : describe.skip;

async function register(user: TestUser): Promise<string> {
  const res = await user.client.post("/register", { event_types: ["message"] });
  expect(res.body.result).toBe("success");
  return res.body.queue_id as string;
}

const poll = (user: TestUser, queueId: string) => user.client.get("/events", { queue_id: queueId, last_event_id: -1, dont_block: true });

function pollAuth(server: TestServer): PollAuthenticator {
  const events = server.running.events;
  if (events === null) throw new Error("the test server runs no event tier");
  return events.pollAuth;
}

/** What the authenticator has counted since `before`. */
function since(auth: PollAuthenticator, before: PollAuthStats): PollAuthStats {
  const now = auth.stats;
  return { trusted: now.trusted - before.trusted, statements: now.statements - before.statements, checked: now.checked - before.checked, logins: now.logins - before.logins };
}

/** A request carrying `user`'s credentials as their polls do, for the synchronous API. */
function requestOf(server: TestServer, user: TestUser): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  const { email, apiKey } = user.client.credentials!;
  req.headers = { host: `127.0.0.1:${server.running.port}`, authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}` };
  return req;
}

/** A user whose copy the node trusts: two polls, the second needing no statement. */
async function trustedPoller(server: TestServer, name: string): Promise<{ user: TestUser; queueId: string }> {
  const user = await createTestUser(server, name);
  const queueId = await register(user);
  // A notification of the user's creation arriving after the first poll's login was sent would
  // (rightly) leave its answer untrusted.
  await actorRowsSettled(server);
  expect((await poll(user, queueId)).status).toBe(200);
  const before = { ...pollAuth(server).stats };
  expect((await poll(user, queueId)).status).toBe(200);
  expect(since(pollAuth(server), before)).toEqual({ trusted: 1, statements: 0, checked: 0, logins: 0 });
  expect(pollAuth(server).authenticateNow(requestOf(server, user))?.id).toBe(user.id);
  return { user, queueId };
}

async function withDatabase<T>(server: TestServer, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: server.running.services.config.databaseUrl! });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describeOnPostgres("poll authentication trusts checked copies until Postgres says they changed", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer("postgres");
  });
  afterAll(() => server.stop());

  test("a poll of a trusted copy runs no statement: it is answered while user_profile and realm are locked", async () => {
    const { user, queueId } = await trustedPoller(server, "Trusted Poller");
    const before = { ...pollAuth(server).stats };
    await withDatabase(server, async (locker) => {
      await locker.query("BEGIN");
      // Any statement reading either table waits for this transaction.
      await locker.query("LOCK TABLE user_profile, realm IN ACCESS EXCLUSIVE MODE");
      const answer = poll(user, queueId);
      try {
        const first = await Promise.race([answer, new Promise<"waiting">((resolve) => setTimeout(() => resolve("waiting"), 5000))]);
        expect(first === "waiting" ? first : first.body).toEqual({ result: "success", msg: "", events: [], queue_id: queueId });
      } finally {
        await locker.query("ROLLBACK");
        await answer;
      }
    });
    expect(since(pollAuth(server), before)).toEqual({ trusted: 1, statements: 0, checked: 0, logins: 0 });
  });

  test("the decoded credentials kept per header pair are never another request's: another key, host or user is decoded afresh", async () => {
    const keeper = await trustedPoller(server, "Memo Keeper");
    const other = (await trustedPoller(server, "Memo Other")).user;
    // Creating the second user changed the realm row: the first's copy is checked once more.
    expect((await poll(keeper.user, keeper.queueId)).status).toBe(200);
    const { user } = keeper;
    const auth = pollAuth(server);
    const req = requestOf(server, user);
    expect(auth.authenticateNow(req)?.id).toBe(user.id);
    expect(auth.authenticateNow(requestOf(server, other))?.id).toBe(other.id);
    // The same email with a wrong key, and the right header on another organization's host.
    const wrongKey = requestOf(server, user);
    wrongKey.headers.authorization = `Basic ${Buffer.from(`${user.email}:not-the-key`).toString("base64")}`;
    expect(auth.authenticateNow(wrongKey)).toBeUndefined();
    const elsewhere = requestOf(server, user);
    elsewhere.headers.host = "elsewhere.chat.test";
    expect(auth.authenticateNow(elsewhere)).toBeUndefined();
    // Credentials holding a NUL are refused as the ordinary route refuses them, every time.
    const nul = requestOf(server, user);
    nul.headers.authorization = `Basic ${Buffer.from(`${user.email}:a\u0000b`).toString("base64")}`;
    expect(() => auth.authenticateNow(nul)).toThrow(/NULL/);
    expect(() => auth.authenticateNow(nul)).toThrow(/NULL/);
    expect(auth.authenticateNow(req)?.id).toBe(user.id);
  });

  test("a registration's login is kept: the client's next registration and its DELETE run no statement, and are refused once a deactivation is heard", async () => {
    const user = await createTestUser(server, "Registering Client");
    await actorRowsSettled(server);
    let before = { ...pollAuth(server).stats };
    const first = await register(user);
    expect(since(pollAuth(server), before)).toMatchObject({ statements: 0, logins: 1 });
    before = { ...pollAuth(server).stats };
    const second = await register(user);
    expect((await user.client.delete("/events", { queue_id: first })).body.result).toBe("success");
    expect(since(pollAuth(server), before)).toEqual({ trusted: 2, statements: 0, checked: 0, logins: 0 });
    const heard = actorRowNotified(server, `u${user.id}`);
    expect((await server.owner.delete(`/users/${user.id}`)).body.result).toBe("success");
    await heard;
    for (const refused of [await user.client.delete("/events", { queue_id: second }), await user.client.post("/register", {})]) {
      expect([refused.status, refused.body]).toEqual([401, expect.objectContaining({ result: "error", code: "USER_DEACTIVATED" })]);
    }
  });

  test("a new API key: once its notification arrives, the old key's next poll is refused by the ordinary route", async () => {
    const { user, queueId } = await trustedPoller(server, "Rekeyed Trusted Poller");
    const heard = actorRowNotified(server, `u${user.id}`);
    const renewed = await user.client.post("/users/me/api_key/regenerate");
    expect(renewed.body.result).toBe("success");
    await heard;
    expect(pollAuth(server).authenticateNow(requestOf(server, user))).toBeUndefined();
    const refused = await poll(user, queueId);
    expect([refused.status, refused.body]).toEqual([401, expect.objectContaining({ result: "error", msg: "Invalid API key" })]);
  });

  test("a deactivation: once its notification arrives, the next poll is refused by the ordinary route", async () => {
    const { user, queueId } = await trustedPoller(server, "Deactivated Trusted Poller");
    const heard = actorRowNotified(server, `u${user.id}`);
    expect((await server.owner.delete(`/users/${user.id}`)).body.result).toBe("success");
    await heard;
    expect(pollAuth(server).authenticateNow(requestOf(server, user))).toBeUndefined();
    const refused = await poll(user, queueId);
    expect([refused.status, refused.body]).toEqual([401, expect.objectContaining({ result: "error", code: "USER_DEACTIVATED" })]);
  });

  test("a change to the realm row untrusts its users' copies: the next poll is checked, and trusted again after", async () => {
    const { user, queueId } = await trustedPoller(server, "Realm Change Poller");
    const { realm_id: realmId } = await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: user.id } });
    const heard = actorRowNotified(server, `r${realmId}`);
    expect((await server.owner.patch("/realm", { description: "changed under the pollers" })).body.result).toBe("success");
    await heard;
    expect(pollAuth(server).authenticateNow(requestOf(server, user))).toBeUndefined();
    let before = { ...pollAuth(server).stats };
    expect((await poll(user, queueId)).status).toBe(200);
    // The copy's realm version is old: its check fails and the user is read afresh.
    expect(since(pollAuth(server), before)).toEqual({ trusted: 0, statements: 1, checked: 1, logins: 1 });
    before = { ...pollAuth(server).stats };
    expect((await poll(user, queueId)).status).toBe(200);
    expect(since(pollAuth(server), before)).toEqual({ trusted: 1, statements: 0, checked: 0, logins: 0 });
  });

  test("with the listening connection killed, polls are checked each time; once it is back nothing from before is trusted", async () => {
    const validity = notifiedValidity(server)!;
    const auth = pollAuth(server);
    const { user, queueId } = await trustedPoller(server, "Outage Poller");
    const req = requestOf(server, user);
    const lost = nextValidityEvent(validity, "lost");
    const back = nextValidityEvent(validity, "listening");
    const killed = await withDatabase(server, (admin) =>
      admin.query<{ killed: boolean }>("SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()", [ACTOR_ROW_LISTENER_NAME]),
    );
    expect(killed.rows).toEqual([{ killed: true }]);
    await lost;
    // Before the reconnect (its first try waits 100 ms: these checks are sent in this turn of the
    // event loop), and whatever a check sent while deaf finds, it is not trusted.
    expect(auth.authenticateNow(req)).toBeUndefined();
    let before = { ...auth.stats };
    expect((await auth.authenticate(req))?.id).toBe(user.id);
    expect((await auth.authenticate(req))?.id).toBe(user.id);
    expect(since(auth, before)).toEqual({ trusted: 0, statements: 2, checked: 2, logins: 0 });
    await back;
    expect(auth.authenticateNow(req)).toBeUndefined();
    before = { ...auth.stats };
    expect((await poll(user, queueId)).status).toBe(200);
    expect(since(auth, before)).toEqual({ trusted: 0, statements: 1, checked: 1, logins: 0 });
    before = { ...auth.stats };
    expect((await poll(user, queueId)).status).toBe(200);
    expect(since(auth, before)).toEqual({ trusted: 1, statements: 0, checked: 0, logins: 0 });
    // Listening again: a change is heard as before.
    const heard = actorRowNotified(server, `u${user.id}`);
    expect((await server.owner.delete(`/users/${user.id}`)).body.result).toBe("success");
    await heard;
    expect((await poll(user, queueId)).body).toMatchObject({ result: "error", code: "USER_DEACTIVATED" });
  });

  test("a realm deactivated by a plain UPDATE (no action involved) refuses its users' next polls", async () => {
    const { user, queueId } = await trustedPoller(server, "Realm Gone Poller");
    const { realm_id: realmId } = await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: user.id } });
    const heard = actorRowNotified(server, `r${realmId}`);
    await withDatabase(server, (client) => client.query("UPDATE realm SET deactivated = true WHERE id = $1", [realmId]));
    try {
      await heard;
      expect((await poll(user, queueId)).body).toMatchObject({ result: "error", code: "REALM_DEACTIVATED" });
    } finally {
      await withDatabase(server, (client) => client.query("UPDATE realm SET deactivated = false WHERE id = $1", [realmId]));
    }
  });
});

describeEmbedded("poll authentication on PGlite checks every poll", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer("embedded");
  });
  afterAll(() => server.stop());

  test("no copy is ever trusted: each poll's copy is checked by a statement", async () => {
    const auth = pollAuth(server);
    expect(auth.validity).toBe(NEVER_VALID);
    const user = await createTestUser(server, "Embedded Poller");
    const queueId = await register(user);
    expect((await poll(user, queueId)).status).toBe(200);
    const before = { ...auth.stats };
    for (let i = 0; i < 3; i++) expect((await poll(user, queueId)).status).toBe(200);
    expect(since(auth, before)).toEqual({ trusted: 0, statements: 3, checked: 3, logins: 0 });
    expect(auth.authenticateNow(requestOf(server, user))).toBeUndefined();
  });
});

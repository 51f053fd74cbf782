import { createMember as createSharedMember } from "../support/users.ts";
import { applyEvents } from "@chat/core";
import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient, ApiResponse, Params } from "../support/client.ts";
import { encodeParams } from "../support/client.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("presence (%s)", (mode) => {
  let server: TestServer;
  let member: ApiClient;
  let memberId: number;
  let other: ApiClient;
  let otherId: number;
  let bot: ApiClient;
  let botEmail: string;

  const createMember = (email: string, fullName: string) => createSharedMember(server, email, fullName);

  /** POST /users/me/presence from a client that names itself in User-Agent, as Zulip apps do. */
  async function report(client: ApiClient, params: Params, agent = "ZulipMobile/27.1 (Android 12)"): Promise<ApiResponse> {
    const res = await client.raw("post", "/users/me/presence").set("User-Agent", agent).type("form").send(encodeParams(params));
    return { status: res.status, body: res.body, headers: res.headers as Record<string, string> };
  }

  const prisma = () => server.running.services.db.prisma;
  const register = async (client: ApiClient, extra: Params = {}) => (await client.post("/register", { event_types: ["presence"], ...extra })).body;

  beforeAll(async () => {
    server = await startTestServer(mode);
    ({ id: memberId, client: member } = await createMember("here@example.com", "Hal Here"));
    ({ id: otherId, client: other } = await createMember("there@example.com", "Thea There"));
    botEmail = "presence-bot@example.com";
    const created = await createMember(botEmail, "Presence Bot");
    await prisma().userProfile.update({ where: { id: created.id }, data: { is_bot: true, bot_type: 1 } });
    bot = created.client;
  });
  afterAll(() => server.stop());

  describe("POST /users/me/presence", () => {
    test("a first report is recorded per client, answered with the realm's presence and announced to everyone", async () => {
      const queues = await Promise.all([member, other, server.owner].map(async (c) => (await register(c)).queue_id as string));
      const before = Date.now() / 1000;
      const res = await report(member, { status: "active" });
      expect(res.body).toMatchObject({ result: "success", msg: "" });
      expect(res.body.server_timestamp).toBeGreaterThanOrEqual(before - 1);
      const mine = res.body.presences["here@example.com"];
      expect(mine).toEqual({
        ZulipMobile: { client: "ZulipMobile", status: "active", timestamp: expect.any(Number), pushable: false },
        aggregated: { client: "ZulipMobile", status: "active", timestamp: mine.ZulipMobile.timestamp },
      });
      expect(Math.abs(mine.ZulipMobile.timestamp - before)).toBeLessThan(5);
      for (const [i, client] of [member, other, server.owner].entries()) {
        const event = await waitForEvent(client, queues[i], (e) => e.type === "presence");
        expect(event).toEqual({
          id: expect.any(Number),
          type: "presence",
          user_id: memberId,
          email: "here@example.com",
          server_timestamp: expect.any(Number),
          presence: { ZulipMobile: { client: "ZulipMobile", status: "active", timestamp: mine.ZulipMobile.timestamp, pushable: false } },
        });
      }
    });

    test("reports within Zulip's 70 s window only move the timestamp: no event", async () => {
      const queue = (await register(other)).queue_id;
      expect((await report(member, { status: "active" })).body.result).toBe("success");
      // Active to idle before the last report is stale is ignored (two clients, one idle, do not flicker).
      const res = await report(member, { status: "idle" });
      expect(res.body.presences["here@example.com"].ZulipMobile.status).toBe("active");
      await new Promise((r) => setTimeout(r, 200));
      expect(await drainEvents(other, queue)).toEqual([]);
    });

    test("coming back after the window, or from idle, is announced", async () => {
      await prisma().userPresence.updateMany({ where: { user_id: memberId }, data: { timestamp: new Date(Date.now() - 120_000) } });
      let queue = (await register(other)).queue_id;
      expect((await report(member, { status: "active" })).body.result).toBe("success");
      expect(await waitForEvent(other, queue, (e) => e.type === "presence")).toMatchObject({ user_id: memberId, presence: { ZulipMobile: { status: "active" } } });

      // Idle once stale is recorded silently; active after idle is announced.
      await prisma().userPresence.updateMany({ where: { user_id: memberId }, data: { timestamp: new Date(Date.now() - 120_000) } });
      queue = (await register(other)).queue_id;
      expect((await report(member, { status: "idle" })).body.presences["here@example.com"].ZulipMobile.status).toBe("idle");
      await new Promise((r) => setTimeout(r, 200));
      expect(await drainEvents(other, queue)).toEqual([]);
      await report(member, { status: "active" });
      expect(await waitForEvent(other, queue, (e) => e.type === "presence")).toMatchObject({ presence: { ZulipMobile: { status: "active" } } });
    });

    test("each client has its own entry; aggregated is the most recent", async () => {
      const res = await report(member, { status: "idle" }, "ZulipElectron/5.0");
      const mine = res.body.presences["here@example.com"];
      expect(Object.keys(mine).sort()).toEqual(["ZulipElectron", "ZulipMobile", "aggregated"]);
      expect(mine.aggregated).toEqual({ client: "ZulipElectron", status: "idle", timestamp: mine.ZulipElectron.timestamp });
    });

    test("slim_presence keys by user id; ping_only answers with nothing", async () => {
      await report(other, { status: "active" });
      const slim = await report(member, { status: "active", slim_presence: true });
      expect(Object.keys(slim.body.presences).sort()).toEqual([String(memberId), String(otherId)].sort());
      const ping = await report(member, { status: "active", ping_only: true });
      expect(ping.body).toEqual({ result: "success", msg: "" });
    });

    test.each([
      [{}, "Missing 'status' argument"],
      [{ status: "away" }, "Invalid status: away"],
      [{ status: "active", ping_only: "yes" }, 'Argument "ping_only" is not valid JSON.'],
      [{ status: "active", new_user_input: 1 }, "new_user_input is not a boolean"],
      [{ status: "active", slim_presence: "true1" }, 'Argument "slim_presence" is not valid JSON.'],
    ])("refuses %j and records nothing", async (params, msg) => {
      const before = await prisma().userPresence.findMany({ where: { user_id: memberId }, orderBy: { id: "asc" } });
      const res = await report(member, params, "BrandNewClient/1.0");
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", msg });
      expect(await prisma().userPresence.findMany({ where: { user_id: memberId }, orderBy: { id: "asc" } })).toEqual(before);
    });

    test("refuses bots", async () => {
      const res = await report(bot, { status: "active" });
      expect(res.body).toEqual({ result: "error", msg: "This endpoint does not accept bot requests.", code: "BAD_REQUEST" });
      expect(await prisma().userPresence.count({ where: { user: { email: botEmail } } })).toBe(0);
    });

    test("a user with presence_enabled off is not recorded and not announced", async () => {
      const { id, client } = await createMember("hidden@example.com", "Hidden Person");
      expect((await client.patch("/settings/notifications", { presence_enabled: false })).body).toMatchObject({ presence_enabled: false });
      const queue = (await register(other)).queue_id;
      const res = await report(client, { status: "active" });
      expect(res.body.result).toBe("success");
      expect(res.body.presences).not.toHaveProperty("hidden@example.com");
      expect(await prisma().userPresence.count({ where: { user_id: id } })).toBe(0);
      await new Promise((r) => setTimeout(r, 200));
      expect(await drainEvents(other, queue)).toEqual([]);
    });
  });

  describe("GET /users/{email}/presence and /realm/presence", () => {
    test("one user's presence per client plus aggregated, by email or user id", async () => {
      const res = await other.get("/users/here@example.com/presence");
      expect(res.body.result).toBe("success");
      expect(Object.keys(res.body.presence).sort()).toEqual(["ZulipElectron", "ZulipMobile", "aggregated"]);
      expect(res.body.presence.ZulipMobile).toEqual({ status: "active", timestamp: expect.any(Number) });
      expect(res.body.presence.aggregated).toEqual({ status: "active", timestamp: res.body.presence.ZulipMobile.timestamp });
      expect((await other.get(`/users/${memberId}/presence`)).body.presence).toEqual(res.body.presence);
      expect((await other.get("/users/HERE@example.com/presence")).body.result).toBe("success");
    });

    test("an old aggregated presence reads as offline", async () => {
      const { id, client } = await createMember("gone@example.com", "Gina Gone");
      await report(client, { status: "active" });
      await prisma().userPresence.updateMany({ where: { user_id: id }, data: { timestamp: new Date(Date.now() - 3600_000) } });
      const res = await other.get("/users/gone@example.com/presence");
      expect(res.body.presence.aggregated.status).toBe("offline");
      expect(res.body.presence.ZulipMobile.status).toBe("active");
    });

    test.each([
      ["/users/nobody@example.com/presence", "No such user"],
      ["/users/987654/presence", "No such user"],
      ["/users/presence-bot@example.com/presence", "Presence is not supported for bot users."],
      ["/users/owner@example.com/presence", "No presence data for owner@example.com"],
    ])("GET %s is refused", async (path, msg) => {
      const res = await other.get(path);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
    });

    test("a deactivated user is no such user", async () => {
      const { id, client } = await createMember("left@example.com", "Lefty Left");
      await report(client, { status: "active" });
      await server.owner.delete(`/users/${id}`);
      expect((await other.get("/users/left@example.com/presence")).body.msg).toBe("No such user");
      expect((await other.get("/realm/presence")).body.presences).not.toHaveProperty("left@example.com");
    });

    test("GET /realm/presence lists the organization by email", async () => {
      const res = await other.get("/realm/presence");
      expect(res.body).toMatchObject({ result: "success", msg: "", server_timestamp: expect.any(Number) });
      expect(res.body.presences["here@example.com"].aggregated).toBeDefined();
      expect(res.body.presences["there@example.com"].ZulipMobile.status).toBe("active");
    });
  });

  describe("/register and events", () => {
    test("presences in the state, by email or with slim_presence by user id in the modern form", async () => {
      const full = await register(other);
      expect(full.presences["here@example.com"]).toBeDefined();
      const slim = await register(other, { slim_presence: true });
      // Zulip's modern form (as since Zulip 3.0): when last active, and last connected on any client.
      const reports = Object.entries(full.presences["here@example.com"] as Record<string, { status: string; timestamp: number }>).filter(([client]) => client !== "aggregated").map(([, info]) => info);
      const newest = (infos: Array<{ timestamp: number }>) => Math.max(...infos.map((info) => info.timestamp));
      expect(slim.presences[String(memberId)]).toEqual({ active_timestamp: newest(reports.filter((info) => info.status === "active")), idle_timestamp: newest(reports) });
      expect(Object.keys(slim.presences).every((k) => /^\d+$/.test(k))).toBe(true);
    });

    test("a slim_presence queue gets the event without email", async () => {
      const { id, client } = await createMember("slim@example.com", "Sly Slim");
      const slimQueue = (await register(other, { slim_presence: true })).queue_id;
      await report(client, { status: "active" });
      const event = await waitForEvent(other, slimQueue, (e) => e.type === "presence");
      expect(event).toEqual({ id: expect.any(Number), type: "presence", user_id: id, server_timestamp: expect.any(Number), presence: { ZulipMobile: expect.any(Object) } });
    });

    test("verifyAction: a new client's report", async () => {
      const events = await verifyAction(other, ["presence"], () => report(member, { status: "active" }, "ZulipTerminal/0.6"));
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: "presence", email: "here@example.com", presence: { ZulipTerminal: { status: "active" } } });
    });

    test("verifyAction: coming back from idle", async () => {
      const { client } = await createMember("back@example.com", "Bea Back");
      await report(client, { status: "idle" });
      const events = await verifyAction(other, ["presence"], () => report(client, { status: "active" }));
      expect(events).toHaveLength(1);
    });

    test("a slim_presence state plus its events equals a fresh slim_presence state", async () => {
      const { client } = await createMember("slimmer@example.com", "Sid Slimmer");
      const before = await register(other, { slim_presence: true });
      await report(client, { status: "active" });
      const event = await waitForEvent(other, before.queue_id, (e) => e.type === "presence");
      const state = applyEvents({ presences: before.presences }, [event], otherId);
      expect(state.presences).toEqual((await register(other, { slim_presence: true })).presences);
    });

    test("verifyAction: a user's first report", async () => {
      const { client } = await createMember("first@example.com", "Fay First");
      const events = await verifyAction(other, ["presence"], () => report(client, { status: "idle" }, "website"));
      expect(events[0].presence).toEqual({ website: { client: "website", status: "idle", timestamp: expect.any(Number), pushable: false } });
    });
  });
});

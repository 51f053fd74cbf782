// Small read endpoints of Zulip's API up to feature level 277: a user by email (FL 39), whether a
// user is subscribed to a stream (FL 12), one stream (FL 132), a stream's email address (FL 226)
// and a user's status (FL 262), each with Zulip's access rules: guests, private streams,
// deactivated users, bots and other organizations.
import { createRealm } from "@chat/core";
import type { ApiClient, ApiResponse } from "../support/client.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

const byEmail = (email: string) => `/users/${encodeURIComponent(email)}`;

function refused(res: ApiResponse, msg: string, status = 400): void {
  expect({ status: res.status, msg: res.body.msg, result: res.body.result }).toEqual({ status, msg, result: "error" });
}

describe.each(MODES)("Zulip 9.0 read endpoints (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;
  let guest: TestUser;
  let gone: TestUser;
  let botId: number;
  let botEmail: string;
  let acmeUser: { id: number; email: string };
  let acmeStreamId: number;
  let publicId: number;
  let secretId: number;
  let guestStreamId: number;
  let deletedId: number;

  const streamId = async (name: string) => (await server.owner.get("/get_stream_id", { stream: name })).body.stream_id as number;

  async function subscribe(names: string[], principals: number[], inviteOnly = false): Promise<void> {
    const res = await server.owner.post("/users/me/subscriptions", { subscriptions: names.map((name) => ({ name })), principals, invite_only: inviteOnly });
    expect(res.body.result).toBe("success");
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Reader");
    bob = await createTestUser(server, "Bob Reader");
    admin = await createTestUser(server, "Ada Admin", "admin");
    guest = await createTestUser(server, "Gus Guest", "guest");
    gone = await createTestUser(server, "Dora Gone");
    expect((await server.owner.delete(`/users/${gone.id}`)).body.result).toBe("success");
    const bot = await server.owner.post("/bots", { full_name: "Reader Bot", short_name: "reader" });
    expect(bot.body.result).toBe("success");
    botId = bot.body.user_id as number;
    botEmail = (await server.owner.get(`/users/${botId}`)).body.user.email as string;

    await subscribe(["zr public"], [alice.id]);
    // Bob alone is in the private stream: the owner (an administrator) who made it is not.
    await subscribe(["zr secret"], [bob.id], true);
    await subscribe(["zr guests"], [guest.id]);
    await subscribe(["zr deleted"], [alice.id]);
    [publicId, guestStreamId, deletedId] = await Promise.all(["zr public", "zr guests", "zr deleted"].map(streamId));
    secretId = (await bob.client.get("/get_stream_id", { stream: "zr secret" })).body.stream_id as number;
    expect((await server.owner.delete(`/streams/${deletedId}`)).body.result).toBe("success");

    const { services } = server.running;
    const acme = await services.actions.run(0, (tx, events) =>
      createRealm(tx, events, services.ctx, { subdomain: "zracme", name: "Acme", owner: { email: "acme-owner@example.com", fullName: "Acme Owner", password: "acme-password" } }),
    );
    acmeUser = { id: acme.owner.id, email: acme.owner.email };
    acmeStreamId = (await services.db.prisma.stream.findFirstOrThrow({ where: { realm_id: acme.realm.id } })).id;
  });
  afterAll(() => server.stop());

  describe("GET /users/{email}", () => {
    test("answers as GET /users/{user_id} does, whatever the case of the address, with the same options", async () => {
      for (const options of [{}, { client_gravatar: true, include_custom_profile_fields: true }]) {
        const viaId = await alice.client.get(`/users/${bob.id}`, options);
        const viaEmail = await alice.client.get(byEmail(bob.email.toUpperCase()), options);
        expect(viaEmail.status).toBe(200);
        expect(viaEmail.body).toEqual(viaId.body);
        expect(viaEmail.body.user).toMatchObject({ user_id: bob.id, email: bob.email });
      }
      expect((await alice.client.get(byEmail(bob.email), { include_custom_profile_fields: true })).body.user.profile_data).toEqual({});
    });

    test("finds deactivated users and bots, as Zulip does", async () => {
      expect((await alice.client.get(byEmail(gone.email))).body.user).toMatchObject({ user_id: gone.id, is_active: false });
      expect((await guest.client.get(byEmail(botEmail))).body.user).toMatchObject({ user_id: botId, is_bot: true });
    });

    test("an unknown address, or another organization's user, is `No such user`", async () => {
      refused(await alice.client.get(byEmail("nobody@example.com")), "No such user");
      refused(await alice.client.get(byEmail(acmeUser.email)), "No such user");
      refused(await alice.client.get(byEmail("not an email")), "No such user");
    });

    test("leaves /users/me, /users/{user_id} and the other methods where they were", async () => {
      expect((await alice.client.get("/users/me")).body).toMatchObject({ user_id: alice.id, email: alice.email });
      expect((await alice.client.get(`/users/${bob.id}`)).body.user.user_id).toBe(bob.id);
      refused(await alice.client.get(`/users/${acmeUser.id}`), "No such user");
      // PATCH /users/{email} is feature level 313's; DELETE by email is still no endpoint.
      expect((await server.owner.patch(byEmail(bob.email), { full_name: "Bob Reader" })).body.result).toBe("success");
      refused(await server.owner.delete(byEmail(bob.email)), "Endpoint not found", 404);
    });

    test("while addresses are hidden, a real address finds the user only for those who may see it", async () => {
      expect((await server.owner.patch("/realm", { email_address_visibility: 3 })).body.result).toBe("success");
      try {
        const shown = `user${bob.id}@chat.test`;
        expect((await alice.client.get(byEmail(shown))).body.user).toMatchObject({ user_id: bob.id, email: shown });
        // A member may not see Bob's address, so it names nobody: a guess learns nothing.
        refused(await alice.client.get(byEmail(bob.email)), "No such user");
        refused(await guest.client.get(byEmail(bob.email)), "No such user");
        // Their own address, and anyone's for an administrator.
        expect((await bob.client.get(byEmail(bob.email))).body.user.user_id).toBe(bob.id);
        expect((await admin.client.get(byEmail(bob.email))).body.user).toMatchObject({ user_id: bob.id, email: shown, delivery_email: bob.email });
      } finally {
        expect((await server.owner.patch("/realm", { email_address_visibility: 1 })).body.result).toBe("success");
      }
    });
  });

  describe("GET /users/{user_id}/subscriptions/{stream_id}", () => {
    const status = (client: ApiClient, userId: number, stream: number) => client.get(`/users/${userId}/subscriptions/${stream}`);

    test("whether the user is subscribed", async () => {
      expect((await status(bob.client, alice.id, publicId)).body).toEqual({ result: "success", msg: "", is_subscribed: true });
      expect((await status(alice.client, bob.id, publicId)).body.is_subscribed).toBe(false);
      expect((await status(alice.client, alice.id, publicId)).body.is_subscribed).toBe(true);
      expect((await status(bob.client, bob.id, secretId)).body.is_subscribed).toBe(true);
    });

    test("a private stream answers only its subscribers and administrators", async () => {
      refused(await status(alice.client, bob.id, secretId), "Invalid stream id");
      expect((await status(admin.client, bob.id, secretId)).body.is_subscribed).toBe(true);
      expect((await status(server.owner, alice.id, secretId)).body.is_subscribed).toBe(false);
    });

    test("a guest asks only of streams it is in", async () => {
      refused(await status(guest.client, alice.id, publicId), "Invalid stream id");
      expect((await status(guest.client, guest.id, guestStreamId)).body.is_subscribed).toBe(true);
      expect((await status(guest.client, alice.id, guestStreamId)).body.is_subscribed).toBe(false);
    });

    test("refuses bots, deactivated users, deleted streams and other organizations' users and streams", async () => {
      refused(await status(alice.client, botId, publicId), "No such user");
      refused(await status(alice.client, gone.id, publicId), "User is deactivated");
      refused(await status(alice.client, acmeUser.id, publicId), "No such user");
      refused(await status(alice.client, alice.id, acmeStreamId), "Invalid stream id");
      refused(await status(server.owner, alice.id, deletedId), "Invalid stream id");
      refused(await status(alice.client, alice.id, 99999999), "Invalid stream id");
      refused(await alice.client.get(`/users/me/subscriptions/${publicId}`), "Endpoint not found", 404);
      refused(await alice.client.get(`/users/${alice.id}/subscriptions/general`), "Endpoint not found", 404);
    });
  });

  describe("GET /streams/{stream_id}", () => {
    test("the stream object GET /streams lists", async () => {
      const listed = (await alice.client.get("/streams")).body.streams as Array<{ stream_id: number }>;
      const res = await alice.client.get(`/streams/${publicId}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: "success", msg: "", stream: listed.find((s) => s.stream_id === publicId) });
      // A public stream is any member's to read, subscribed or not.
      expect((await bob.client.get(`/streams/${publicId}`)).body.stream.name).toBe("zr public");
    });

    test("a private stream only to its subscribers and its channel administrators: an organization administrator who is neither is refused", async () => {
      expect((await bob.client.get(`/streams/${secretId}`)).body.stream).toMatchObject({ stream_id: secretId, name: "zr secret", invite_only: true });
      refused(await alice.client.get(`/streams/${secretId}`), "Invalid stream id");
      refused(await admin.client.get(`/streams/${secretId}`), "Invalid stream id");
      refused(await guest.client.get(`/streams/${secretId}`), "Invalid stream id");
      // The owner made it, so administers it (can_administer_channel_group, feature levels 325, 349): metadata access.
      expect((await server.owner.get(`/streams/${secretId}`)).body.stream).toMatchObject({ stream_id: secretId, invite_only: true });
    });

    test("a guest reads only the streams it is in, and web-public ones", async () => {
      refused(await guest.client.get(`/streams/${publicId}`), "Invalid stream id");
      expect((await guest.client.get(`/streams/${guestStreamId}`)).body.stream.stream_id).toBe(guestStreamId);
      const { prisma } = server.running.services.db;
      await prisma.stream.update({ where: { id: publicId }, data: { is_web_public: true } });
      try {
        expect((await guest.client.get(`/streams/${publicId}`)).body.stream).toMatchObject({ stream_id: publicId, is_web_public: true });
        expect((await guest.client.get(`/streams/${publicId}/email_address`)).body.email).toBe("");
      } finally {
        await prisma.stream.update({ where: { id: publicId }, data: { is_web_public: false } });
      }
    });

    test("an archived stream with is_archived (feature level 315); refuses other organizations' and ids that are not ids", async () => {
      expect((await server.owner.get(`/streams/${deletedId}`)).body.stream).toMatchObject({ stream_id: deletedId, is_archived: true });
      refused(await alice.client.get(`/streams/${acmeStreamId}`), "Invalid stream id");
      refused(await alice.client.get("/streams/zr%20public"), "Endpoint not found", 404);
      expect((await alice.client.get("/streams/99999999999")).status).toBe(400);
    });
  });

  describe("GET /streams/{stream_id}/email_address", () => {
    test("empty, as Zulip without an email gateway, to those who may read the stream", async () => {
      expect((await alice.client.get(`/streams/${publicId}/email_address`)).body).toEqual({ result: "success", msg: "", email: "" });
      expect((await bob.client.get(`/streams/${secretId}/email_address`)).body.email).toBe("");
      expect((await guest.client.get(`/streams/${guestStreamId}/email_address`)).body.email).toBe("");
    });

    test("refused where the stream is not the caller's to read", async () => {
      refused(await alice.client.get(`/streams/${secretId}/email_address`), "Invalid stream id");
      refused(await server.owner.get(`/streams/${secretId}/email_address`), "Invalid stream id");
      refused(await guest.client.get(`/streams/${publicId}/email_address`), "Invalid stream id");
      refused(await alice.client.get(`/streams/${acmeStreamId}/email_address`), "Invalid stream id");
      refused(await alice.client.get(`/streams/${deletedId}/email_address`), "Invalid stream id");
    });
  });

  describe("GET /users/{user_id}/status", () => {
    test("what the user set, and nothing for one who set nothing", async () => {
      expect((await alice.client.post("/users/me/status", { away: true, status_text: "reading" })).body.result).toBe("success");
      expect((await bob.client.get(`/users/${alice.id}/status`)).body).toEqual({ result: "success", msg: "", status: { away: true, status_text: "reading" } });
      expect((await guest.client.get(`/users/${alice.id}/status`)).body.status).toEqual({ away: true, status_text: "reading" });
      expect((await alice.client.post("/users/me/status", { away: false })).body.result).toBe("success");
      expect((await alice.client.get(`/users/${alice.id}/status`)).body.status).toEqual({ status_text: "reading" });
      expect((await alice.client.get(`/users/${bob.id}/status`)).body.status).toEqual({});
    });

    test("refuses bots, deactivated users and other organizations' users", async () => {
      refused(await alice.client.get(`/users/${botId}/status`), "No such user");
      refused(await alice.client.get(`/users/${gone.id}/status`), "User is deactivated");
      refused(await alice.client.get(`/users/${acmeUser.id}/status`), "No such user");
      refused(await alice.client.get(`/users/${alice.email}/status`), "Endpoint not found", 404);
      refused(await alice.client.get("/users/me/status"), "Endpoint not found", 404);
    });
  });
});

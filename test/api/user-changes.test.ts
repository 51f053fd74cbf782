// realm_user update events for a changed avatar and email address, checked as Zulip's verify_action
// does: the events applied to the state from before equal a fresh /register.
import { applyEvents, changeDeliveryEmail } from "@chat/core";
import { eventsUntil } from "../support/messages.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { registerState, verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("avatar and email changes (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    other = await createTestUser(server, "Oscar Other");
  });
  afterAll(() => server.stop());

  const userRow = (id: number) => server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id } });

  describe("DELETE /users/me/avatar", () => {
    test("goes back to the gravatar with a new version; everyone's state follows", async () => {
      const before = await userRow(member.id);
      const events = await verifyAction(other.client, ["realm_user"], () => member.client.delete("/users/me/avatar"));
      expect(events).toEqual([
        {
          id: expect.any(Number),
          type: "realm_user",
          op: "update",
          person: {
            user_id: member.id,
            avatar_source: "G",
            avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=\d+$/),
            avatar_url_medium: expect.stringContaining("&s=500"),
            avatar_version: before.avatar_version + 1,
          },
        },
      ]);
      // The user's own avatar fields in their state follow too.
      await verifyAction(member.client, ["realm_user"], () => member.client.delete("/users/me/avatar"));
    });

    test("refused to members while the organization disables avatar changes", async () => {
      await server.running.services.db.prisma.realm.updateMany({ data: { avatar_changes_disabled: true } });
      try {
        const before = await userRow(member.id);
        expect((await member.client.delete("/users/me/avatar")).body).toEqual({ result: "error", msg: "Avatar changes are disabled in this organization.", code: "BAD_REQUEST" });
        expect((await userRow(member.id)).avatar_version).toBe(before.avatar_version);
        expect((await admin.client.delete("/users/me/avatar")).body.result).toBe("success");
      } finally {
        await server.running.services.db.prisma.realm.updateMany({ data: { avatar_changes_disabled: false } });
      }
    });
  });

  describe("a changed email address (the operator's change-user-email)", () => {
    const change = (userId: number, email: string) =>
      server.running.services.actions.run(1, async (tx, events) => changeDeliveryEmail(tx, events, server.running.services.ctx, await tx.userProfile.findUniqueOrThrow({ where: { id: userId } }), email));

    test("everyone learns the new email and gravatar, administrators and the user the delivery address", async () => {
      const seenByOther = await verifyAction(other.client, ["realm_user"], () => change(member.id, "mia.new@example.com"));
      expect(seenByOther).toContainEqual(expect.objectContaining({ person: { user_id: member.id, new_email: "mia.new@example.com" } }));
      expect(seenByOther.some((e) => "delivery_email" in e.person)).toBe(false);
      const seenByAdmin = await verifyAction(admin.client, ["realm_user"], () => change(member.id, "mia.newer@example.com"));
      expect(seenByAdmin).toContainEqual(expect.objectContaining({ person: { user_id: member.id, delivery_email: "mia.newer@example.com" } }));
      // The user's own email and delivery_email follow in their state. Their credentials name the
      // old address until the change, the new one after: the same queue, read with both.
      const current = server.client("mia.newer@example.com", (await userRow(member.id)).api_key);
      const { queueId, state } = await registerState(current, ["realm_user"]);
      await change(member.id, "mia@example.org");
      const renamed = server.client("mia@example.org", (await userRow(member.id)).api_key);
      const events = await eventsUntil(renamed, queueId, (e) => e.person?.new_email === "mia@example.org");
      const applied = applyEvents(structuredClone(state), events, member.id);
      expect(applied).toMatchObject({ email: "mia@example.org", delivery_email: "mia@example.org" });
      expect(applied).toEqual((await registerState(renamed, ["realm_user"])).state);
      expect((await current.get("/users/me")).body.msg).toBe("Invalid API key");
    });

    test("an address in use or not an address is refused, changing nothing", async () => {
      await expect(change(member.id, other.email)).rejects.toThrow(`Email '${other.email}' already in use`);
      await expect(change(member.id, "not an address")).rejects.toThrow("Invalid email 'not an address'");
      expect((await userRow(member.id)).email).toBe("mia@example.org");
    });
  });
});

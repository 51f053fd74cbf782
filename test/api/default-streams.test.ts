import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("default streams (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let guest: TestUser;
  let publicId: number;
  let privateId: number;

  async function makeStream(name: string, inviteOnly: boolean): Promise<number> {
    const { prisma } = server.running.services.db;
    // With Zulip 10.0's channel settings, as createStream gives them (channel-permissions-10.test.ts).
    const group = async (groupName: string) => (await prisma.userGroup.findFirstOrThrow({ where: { realm_id: 1, is_system_group: true, name: groupName } })).id;
    const nobody = await group("role:nobody");
    const settings = {
      can_send_message_group_id: await group("role:everyone"),
      can_remove_subscribers_group_id: await group("role:administrators"),
      can_administer_channel_group_id: nobody,
      can_add_subscribers_group_id: nobody,
      can_subscribe_group_id: nobody,
    };
    const stream = await prisma.stream.create({ data: { realm_id: 1, name, invite_only: inviteOnly, email_token: name, ...settings } });
    return stream.id;
  }

  async function defaultNames(): Promise<string[]> {
    const body = (await member.client.post("/register", { event_types: ["default_streams"] })).body;
    return body.realm_default_streams.map((s: { name: string }) => s.name);
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    guest = await createTestUser(server, "Gil Guest", "guest");
    publicId = await makeStream("announce", false);
    privateId = await makeStream("secret", true);
  });
  afterAll(() => server.stop());

  test("an administrator adds a default stream; non-guests get default_streams", async () => {
    const memberQueue = (await member.client.post("/register", { event_types: ["default_streams"] })).body.queue_id;
    const guestQueue = (await guest.client.post("/register", { event_types: ["default_streams"] })).body.queue_id;
    expect((await admin.client.post("/default_streams", { stream_id: publicId })).body).toEqual({ result: "success", msg: "" });
    const event = await waitForEvent(member.client, memberQueue, (e) => e.type === "default_streams");
    expect(event.default_streams.map((s: { name: string }) => s.name)).toEqual(["announce", "general"]);
    expect(event.default_streams[0]).toMatchObject({ stream_id: publicId, name: "announce", invite_only: false });
    expect(await drainEvents(guest.client, guestQueue)).toEqual([]);
    expect((await guest.client.post("/register", { event_types: ["default_streams"] })).body.realm_default_streams).toEqual([]);
  });

  test("errors: unknown stream, private stream, missing id; nothing changes", async () => {
    const before = await defaultNames();
    expect((await admin.client.post("/default_streams", { stream_id: 987654 })).body).toEqual({ result: "error", msg: "Invalid stream id", code: "BAD_REQUEST" });
    expect((await admin.client.post("/default_streams", { stream_id: privateId })).body).toEqual({
      result: "error",
      msg: "Private streams cannot be made default.",
      code: "BAD_REQUEST",
    });
    expect((await admin.client.delete("/default_streams", { stream_id: 987654 })).body.msg).toBe("Invalid stream id");
    expect((await admin.client.post("/default_streams", {})).body.msg).toBe("Missing 'stream_id' argument");
    expect((await admin.client.post("/default_streams", { stream_id: "x" })).body.msg).toBe("stream_id is not an integer");
    expect(await defaultNames()).toEqual(before);
  });

  test("members and guests cannot change default streams", async () => {
    for (const user of [member, guest]) {
      expect((await user.client.post("/default_streams", { stream_id: publicId })).body.msg).toBe("Must be an organization administrator");
      expect((await user.client.delete("/default_streams", { stream_id: publicId })).body.msg).toBe("Must be an organization administrator");
    }
  });

  test("register state: default streams add and remove", async () => {
    const id = await makeStream("verify-default", false);
    await verifyAction(member.client, ["default_streams"], () => server.owner.post("/default_streams", { stream_id: id }));
    await verifyAction(member.client, ["default_streams"], () => server.owner.delete("/default_streams", { stream_id: id }));
    expect(await defaultNames()).not.toContain("verify-default");
  });

  describe("default stream groups", () => {
    test("create, rename, change streams, delete; state follows the events", async () => {
      await verifyAction(member.client, ["default_stream_groups"], async () => {
        const res = await admin.client.post("/default_stream_groups/create", { group_name: "team", description: "Team streams", stream_names: ["general"] });
        expect(res.body).toEqual({ result: "success", msg: "" });
      });
      const groups = (await member.client.post("/register", { event_types: ["default_stream_groups"] })).body.realm_default_stream_groups;
      expect(groups).toEqual([{ id: expect.any(Number), name: "team", description: "Team streams", streams: [expect.objectContaining({ name: "general" })] }]);
      const id = groups[0].id;
      await verifyAction(member.client, ["default_stream_groups"], () => admin.client.patch(`/default_stream_groups/${id}`, { new_group_name: "crew" }));
      await verifyAction(member.client, ["default_stream_groups"], () =>
        admin.client.post(`/default_stream_groups/${id}/streams`, { op: "add", stream_names: ["announce"] }),
      );
      expect((await admin.client.post(`/default_stream_groups/${id}/streams`, { op: "add", stream_names: ["announce"] })).body.msg).toBe(
        "Stream 'announce' is already present in default stream group 'crew'",
      );
      expect((await admin.client.post(`/default_stream_groups/${id}/streams`, { op: "add", stream_names: ["secret"] })).body.msg).toBe(
        "Private streams cannot be made default.",
      );
      expect((await admin.client.post(`/default_stream_groups/${id}/streams`, { op: "swap", stream_names: [] })).body.msg).toBe(
        'Invalid value for "op". Specify one of "add" or "remove".',
      );
      await verifyAction(member.client, ["default_stream_groups"], () =>
        admin.client.post(`/default_stream_groups/${id}/streams`, { op: "remove", stream_names: ["general"] }),
      );
      expect((await member.client.delete(`/default_stream_groups/${id}`)).body.msg).toBe("Must be an organization administrator");
      await verifyAction(member.client, ["default_stream_groups"], () => admin.client.delete(`/default_stream_groups/${id}`));
      expect((await admin.client.delete(`/default_stream_groups/${id}`)).body.msg).toBe(`Default stream group with id '${id}' does not exist.`);
    });
  });
});

// Zulip 10.0's channel permissions as group-setting values and the access rules that follow:
// can_remove_subscribers_group any group (feature level 320), can_administer_channel_group (325),
// can_send_message_group replacing stream_post_policy (333), can_add_subscribers_group (342),
// metadata and content access (349), reading and posting through a channel's groups (354), and
// can_subscribe_group (357).
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { sendStreamMessage } from "../support/messages.ts";
import { verifyAction } from "../support/verify-action.ts";

type Value = number | { direct_members: number[]; direct_subgroups: number[] };

describe.each(MODES)("channel permissions as group settings (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let guest: TestUser;
  let groups: Record<string, number>;
  let count = 0;

  const prisma = () => server.running.services.db.prisma;
  const newName = () => `perm ${++count}`;
  const subscribe = (user: TestUser, names: string[], extra: Record<string, unknown> = {}) =>
    user.client.post("/users/me/subscriptions", { subscriptions: names.map((name) => ({ name })), ...extra });
  const streamId = async (name: string) => (await prisma().stream.findFirstOrThrow({ where: { name } })).id;
  const anonymous = (members: number[], subgroups: number[] = []): Value => ({ direct_members: members, direct_subgroups: subgroups });
  /** A stream made by `creator` with these settings (JSON-encoded as a client sends them). */
  const makeStream = async (creator: TestUser, extra: Record<string, unknown> = {}, principals?: number[]): Promise<{ name: string; id: number }> => {
    const name = newName();
    const params: Record<string, unknown> = { ...extra };
    for (const [key, value] of Object.entries(extra)) if (typeof value === "object") params[key] = JSON.stringify(value);
    if (principals) params.principals = JSON.stringify(principals);
    const res = await subscribe(creator, [name], params);
    expect(res.body).toMatchObject({ result: "success" });
    return { name, id: await streamId(name) };
  };
  const patch = (user: TestUser, id: number, params: Record<string, unknown>) => {
    const encoded: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(params)) encoded[key] = typeof value === "object" ? JSON.stringify(value) : value;
    return user.client.patch(`/streams/${id}`, encoded);
  };
  const streamObject = async (user: TestUser, id: number) => (await user.client.get(`/streams/${id}`)).body.stream as Record<string, any>;

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    alice = await createTestUser(server, "Alice Member");
    bob = await createTestUser(server, "Bob Member");
    carol = await createTestUser(server, "Carol Member");
    guest = await createTestUser(server, "Gus Guest", "guest");
    const list = (await admin.client.get("/user_groups")).body.user_groups as Array<{ id: number; name: string }>;
    groups = Object.fromEntries(list.map((group) => [group.name, group.id]));
  });
  afterAll(() => server.stop());

  describe("stream and subscription objects", () => {
    test("carry the five settings as group-setting values; Zulip's defaults, the creator administering", async () => {
      const { id } = await makeStream(alice);
      const expected = {
        can_add_subscribers_group: groups["role:nobody"],
        can_administer_channel_group: anonymous([alice.id]),
        can_remove_subscribers_group: groups["role:administrators"],
        can_send_message_group: groups["role:everyone"],
        can_subscribe_group: groups["role:nobody"],
        stream_post_policy: 1,
        is_announcement_only: false,
      };
      expect(await streamObject(alice, id)).toMatchObject(expected);
      const listed = (await alice.client.get("/streams")).body.streams.find((s: { stream_id: number }) => s.stream_id === id);
      expect(listed).toMatchObject(expected);
      const mine = (await alice.client.get("/users/me/subscriptions")).body.subscriptions.find((s: { stream_id: number }) => s.stream_id === id);
      expect(mine).toMatchObject(expected);
      const registered = (await alice.client.post("/register", { fetch_event_types: ["subscription", "stream"] })).body;
      expect(registered.subscriptions.find((s: { stream_id: number }) => s.stream_id === id)).toMatchObject(expected);
      expect(registered.streams.find((s: { stream_id: number }) => s.stream_id === id)).toMatchObject(expected);
      // Bob, who is not in it, sees it in never_subscribed the same way.
      const bobs = (await bob.client.post("/register", { fetch_event_types: ["subscription"] })).body;
      expect(bobs.never_subscribed.find((s: { stream_id: number }) => s.stream_id === id)).toMatchObject(expected);
    });

    test("creating takes the settings as group-setting values, named or anonymous, checked as Zulip does", async () => {
      const { id } = await makeStream(alice, {
        can_send_message_group: groups["role:administrators"],
        can_add_subscribers_group: anonymous([bob.id], [groups["role:moderators"]]),
        can_remove_subscribers_group: anonymous([carol.id]),
        can_administer_channel_group: groups["role:nobody"],
      });
      expect(await streamObject(alice, id)).toMatchObject({
        can_send_message_group: groups["role:administrators"],
        can_add_subscribers_group: anonymous([bob.id], [groups["role:moderators"]]),
        can_remove_subscribers_group: anonymous([carol.id]),
        can_administer_channel_group: groups["role:nobody"],
        // The integer policy clients of the 3.x era read, kept in step (feature level 333).
        stream_post_policy: 2,
        is_announcement_only: true,
      });
      // can_administer_channel_group and can_subscribe_group may not be role:everyone; nor role:internet anything.
      const everyone = await subscribe(alice, [newName()], { can_subscribe_group: groups["role:everyone"] });
      expect(everyone.body).toMatchObject({ result: "error", msg: "'can_subscribe_group' setting cannot be set to 'role:everyone' group." });
      const internet = await subscribe(alice, [newName()], { can_send_message_group: groups["role:internet"] });
      expect(internet.body).toMatchObject({ result: "error", msg: "'can_send_message_group' setting cannot be set to 'role:internet' group." });
      const stranger = await subscribe(alice, [newName()], { can_administer_channel_group: JSON.stringify(anonymous([999_999])) });
      expect(stranger.body).toMatchObject({ result: "error", msg: "Invalid user ID: 999999" });
      const garbage = await subscribe(alice, [newName()], { can_administer_channel_group: JSON.stringify({ direct_members: "x" }) });
      expect(garbage.status).toBe(400);
    });

    test("3.x clients' stream_post_policy and is_announcement_only set can_send_message_group's system group", async () => {
      const moderated = await makeStream(alice, { stream_post_policy: 4 });
      expect(await streamObject(alice, moderated.id)).toMatchObject({ can_send_message_group: groups["role:moderators"], stream_post_policy: 4 });
      const announce = await makeStream(alice, { is_announcement_only: true });
      expect(await streamObject(alice, announce.id)).toMatchObject({ can_send_message_group: groups["role:administrators"], stream_post_policy: 2, is_announcement_only: true });
      expect((await subscribe(alice, [newName()], { stream_post_policy: 9 })).body).toMatchObject({ result: "error", msg: "Invalid stream_post_policy" });
    });
  });

  describe("PATCH /streams/{id}", () => {
    test("takes {new, old} changes, refuses a stale old, and announces the value as the API shows it", async () => {
      const { id, name } = await makeStream(alice);
      const stale = await patch(alice, id, { can_send_message_group: { new: groups["role:moderators"], old: groups["role:members"] } });
      expect(stale.body).toMatchObject({ result: "error", code: "EXPECTATION_MISMATCH" });
      const events = await verifyAction(alice.client, ["subscription", "stream"], () =>
        patch(alice, id, { can_send_message_group: { new: groups["role:moderators"], old: groups["role:everyone"] } }),
      );
      expect(events).toContainEqual(expect.objectContaining({ type: "stream", op: "update", stream_id: id, name, property: "can_send_message_group", value: groups["role:moderators"] }));
      expect(events).toContainEqual(expect.objectContaining({ type: "stream", op: "update", stream_id: id, property: "stream_post_policy", value: 4 }));
      expect(events).toContainEqual(expect.objectContaining({ type: "stream", op: "update", stream_id: id, property: "is_announcement_only", value: false }));

      const anonymousEvents = await verifyAction(alice.client, ["subscription", "stream"], () =>
        patch(alice, id, { can_remove_subscribers_group: { new: anonymous([bob.id, carol.id]) } }),
      );
      expect(anonymousEvents).toContainEqual(expect.objectContaining({ property: "can_remove_subscribers_group", value: anonymous([bob.id, carol.id]) }));
      // The anonymous group it held before is replaced in place, and a bare id still works (clients before 10.0).
      expect((await patch(alice, id, { can_remove_subscribers_group: { new: anonymous([carol.id]), old: anonymous([carol.id, bob.id]) } })).body.result).toBe("success");
      expect((await streamObject(alice, id)).can_remove_subscribers_group).toEqual(anonymous([carol.id]));
      expect((await patch(alice, id, { can_remove_subscribers_group: groups["role:members"] })).body.result).toBe("success");
      expect((await streamObject(alice, id)).can_remove_subscribers_group).toBe(groups["role:members"]);
      // No orphaned anonymous groups are left behind.
      const orphans = await prisma().$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM user_group g WHERE g.name IS NULL AND g.realm_id = (SELECT realm_id FROM stream WHERE id = ${id})
          AND NOT EXISTS (SELECT 1 FROM stream s WHERE g.id IN (s.can_add_subscribers_group_id, s.can_administer_channel_group_id, s.can_remove_subscribers_group_id, s.can_send_message_group_id, s.can_subscribe_group_id))
          AND NOT EXISTS (SELECT 1 FROM realm r WHERE g.id IN (r.can_add_subscribers_group_id, r.can_create_groups_id, r.can_manage_all_groups_id, r.can_invite_users_group_id))
          AND NOT EXISTS (SELECT 1 FROM user_group u WHERE g.id IN (u.can_add_members_group_id, u.can_join_group_id, u.can_leave_group_id, u.can_manage_group_id, u.can_remove_members_group_id, u.can_mention_group_id))`;
      expect(orphans[0].n).toBe(0);
    });

    test("stream_post_policy and is_announcement_only (3.x) set can_send_message_group, keeping the integer in step", async () => {
      const { id } = await makeStream(alice);
      const events = await verifyAction(alice.client, ["subscription", "stream"], () => patch(alice, id, { is_announcement_only: true }));
      expect(events).toContainEqual(expect.objectContaining({ property: "can_send_message_group", value: groups["role:administrators"] }));
      expect(await streamObject(alice, id)).toMatchObject({ stream_post_policy: 2, is_announcement_only: true, can_send_message_group: groups["role:administrators"] });
      expect((await patch(alice, id, { stream_post_policy: 3 })).body.result).toBe("success");
      expect(await streamObject(alice, id)).toMatchObject({ stream_post_policy: 3, can_send_message_group: groups["role:fullmembers"] });
      // A group with no integer policy of its own is shown as the policy that lets no fewer post.
      expect((await patch(alice, id, { can_send_message_group: { new: anonymous([bob.id]) } })).body.result).toBe("success");
      expect(await streamObject(alice, id)).toMatchObject({ stream_post_policy: 1, is_announcement_only: false });
      expect((await patch(alice, id, { can_send_message_group: { new: groups["role:nobody"] } })).body.result).toBe("success");
      expect(await streamObject(alice, id)).toMatchObject({ stream_post_policy: 2 });
    });

    test("channel administrators (325) administer; others who can read it are told they may not; the rest, it does not exist", async () => {
      const { id } = await makeStream(alice);
      // Alice administers what she made; Bob may not; a member the channel names may.
      expect((await patch(alice, id, { description: "by alice" })).body.result).toBe("success");
      expect((await patch(bob, id, { description: "by bob" })).body).toMatchObject({ result: "error", msg: "You do not have permission to administer this channel." });
      expect((await patch(alice, id, { can_administer_channel_group: { new: anonymous([alice.id, bob.id]) } })).body.result).toBe("success");
      expect((await patch(bob, id, { new_name: `${newName()} renamed` })).body.result).toBe("success");
      // A guest is never a channel administrator, whatever the group says.
      expect((await patch(alice, id, { can_administer_channel_group: { new: anonymous([alice.id, guest.id]) } })).body.result).toBe("success");
      expect((await patch(guest, id, { description: "by the guest" })).body).toMatchObject({ result: "error", msg: "Invalid stream id" });

      const secret = await makeStream(alice, { invite_only: true });
      expect((await patch(bob, secret.id, { description: "x" })).body).toMatchObject({ result: "error", msg: "Invalid stream id" });
      // Archiving: channel administrators too; Bob still may not.
      expect((await bob.client.delete(`/streams/${secret.id}`)).body).toMatchObject({ result: "error", msg: "Invalid stream id" });
      const archivable = await makeStream(alice);
      expect((await bob.client.delete(`/streams/${archivable.id}`)).body).toMatchObject({ result: "error", msg: "You do not have permission to administer this channel." });
      expect((await alice.client.delete(`/streams/${archivable.id}`)).body.result).toBe("success");
    });

    test("metadata without content (349): a channel administrator not in a private channel changes its name, not its privacy or who may subscribe", async () => {
      const secret = await makeStream(alice, { invite_only: true, can_administer_channel_group: anonymous([alice.id, bob.id]) });
      expect((await patch(bob, secret.id, { description: "bob's words" })).body.result).toBe("success");
      const denied = { result: "error", msg: "Channel content access is required." };
      expect((await patch(bob, secret.id, { is_private: false })).body).toMatchObject(denied);
      expect((await patch(bob, secret.id, { history_public_to_subscribers: true })).body).toMatchObject(denied);
      expect((await patch(bob, secret.id, { can_subscribe_group: { new: anonymous([bob.id]) } })).body).toMatchObject(denied);
      expect((await patch(bob, secret.id, { can_add_subscribers_group: { new: anonymous([bob.id]) } })).body).toMatchObject(denied);
      // An organization administrator without content access neither.
      expect((await patch(admin, secret.id, { is_private: false })).body).toMatchObject(denied);
      expect((await prisma().stream.findUniqueOrThrow({ where: { id: secret.id } })).invite_only).toBe(true);
      // can_send_message_group and can_remove_subscribers_group need only metadata access.
      expect((await patch(bob, secret.id, { can_send_message_group: { new: groups["role:members"] } })).body.result).toBe("success");
    });
  });

  describe("posting", () => {
    test("takes can_send_message_group (333): administrators are not exempt; a bot posts if its owner may", async () => {
      const { name, id } = await makeStream(alice, {}, [alice.id, bob.id, admin.id]);
      expect((await patch(alice, id, { can_send_message_group: { new: anonymous([bob.id]) } })).body.result).toBe("success");
      const send = (user: TestUser) => user.client.post("/messages", { type: "stream", to: name, topic: "t", content: "hi" });
      const refused = { result: "error", msg: "You do not have permission to post in this channel." };
      expect((await send(bob)).body.result).toBe("success");
      expect((await send(alice)).body).toMatchObject(refused);
      expect((await send(admin)).body).toMatchObject(refused);
      // Bob's bot may (his standing); Alice's may not.
      const bot = async (owner: TestUser, short: string) => {
        const made = await owner.client.post("/bots", { full_name: `${short} bot`, short_name: `${short}-${count}` });
        expect(made.body.result).toBe("success");
        const row = await prisma().userProfile.findUniqueOrThrow({ where: { id: made.body.user_id } });
        return server.client(row.email, made.body.api_key);
      };
      const bobsBot = await bot(bob, "bobs");
      const alicesBot = await bot(alice, "alices");
      expect((await bobsBot.post("/messages", { type: "stream", to: name, topic: "t", content: "beep" })).body.result).toBe("success");
      expect((await alicesBot.post("/messages", { type: "stream", to: name, topic: "t", content: "beep" })).body).toMatchObject(refused);
      // role:nobody: nobody at all.
      expect((await patch(alice, id, { can_send_message_group: { new: groups["role:nobody"] } })).body.result).toBe("success");
      expect((await send(bob)).body).toMatchObject(refused);
      expect((await send(admin)).body).toMatchObject(refused);
    });
  });

  describe("subscribing and unsubscribing", () => {
    test("others, to a private channel one is not in: its administrators and can_add_subscribers_group (342, 349)", async () => {
      const secret = await makeStream(alice, { invite_only: true, can_add_subscribers_group: anonymous([bob.id]) });
      const add = (user: TestUser, whom: TestUser) =>
        user.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: secret.name }]), principals: JSON.stringify([whom.id]) });
      expect((await add(carol, admin)).body).toMatchObject({ result: "error", msg: `Unable to access stream (${secret.name}).` });
      expect((await add(bob, carol)).body.result).toBe("success");
      // Bob did not join by adding Carol.
      expect(await prisma().subscription.count({ where: { user_id: bob.id, recipient: { type_id: secret.id, type: 2 }, active: true } })).toBe(0);
      // Guests, whatever the group says, may not.
      expect((await patch(alice, secret.id, { can_add_subscribers_group: { new: anonymous([bob.id, guest.id]) } })).body.result).toBe("success");
      expect((await add(guest, guest)).body.result).toBe("error");
    });

    test("oneself, to a private channel: can_subscribe_group or can_add_subscribers_group (357); not guests", async () => {
      const secret = await makeStream(alice, { invite_only: true, can_subscribe_group: anonymous([bob.id, guest.id]), can_add_subscribers_group: anonymous([carol.id]) });
      expect((await subscribe(admin, [secret.name])).body).toMatchObject({ result: "error", msg: `Unable to access stream (${secret.name}).` });
      expect((await subscribe(guest, [secret.name])).body).toMatchObject({ result: "error", msg: `Unable to access stream (${secret.name}).` });
      // can_subscribe_group is about oneself: Bob may not add Admin.
      const other = await bob.client.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: secret.name }]), principals: JSON.stringify([admin.id]) });
      expect(other.body).toMatchObject({ result: "error", msg: `Unable to access stream (${secret.name}).` });
      expect((await subscribe(bob, [secret.name])).body.result).toBe("success");
      expect((await subscribe(carol, [secret.name])).body.result).toBe("success");
    });

    test("others out: can_remove_subscribers_group (any group, 320) or the channel's administrators (349)", async () => {
      const { name, id } = await makeStream(alice, { can_administer_channel_group: anonymous([alice.id]), can_remove_subscribers_group: anonymous([carol.id]) }, [alice.id, bob.id, carol.id, admin.id]);
      const remove = (user: TestUser, whom: TestUser) =>
        user.client.delete("/users/me/subscriptions", { subscriptions: JSON.stringify([name]), principals: JSON.stringify([whom.id]) });
      expect((await remove(bob, admin)).body).toMatchObject({ result: "error", msg: "Insufficient permission" });
      expect((await remove(carol, bob)).body).toMatchObject({ result: "success", removed: [name] });
      expect((await remove(alice, carol)).body).toMatchObject({ result: "success", removed: [name] });
      expect(id).toBeGreaterThan(0);
    });
  });

  describe("content access through groups (354)", () => {
    test("reading and posting in a private channel with shared history without subscribing; never guests, never protected history", async () => {
      const shared = await makeStream(alice, { invite_only: true, history_public_to_subscribers: true, can_subscribe_group: anonymous([bob.id, guest.id]) });
      const protectedHistory = await makeStream(alice, { invite_only: true, history_public_to_subscribers: false, can_subscribe_group: anonymous([bob.id]) });
      const inShared = await sendStreamMessage(alice.client, shared.name, "topic", "shared words");
      const inProtected = await sendStreamMessage(alice.client, protectedHistory.name, "topic", "protected words");

      // Bob reads the shared one: by id, by narrow, its read receipts; reacts to it.
      expect((await bob.client.get(`/messages/${inShared}`)).body).toMatchObject({ result: "success", message: { id: inShared } });
      const narrowed = await bob.client.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "stream", operand: shared.id }]) });
      expect(narrowed.body.messages.map((m: { id: number }) => m.id)).toContain(inShared);
      expect((await bob.client.get(`/messages/${inShared}/read_receipts`)).body.result).toBe("success");
      const topics = await bob.client.get(`/users/me/${shared.id}/topics`);
      expect(topics.body.topics.map((t: { name: string }) => t.name)).toContain("topic");
      expect((await carol.client.get(`/users/me/${shared.id}/topics`)).body).toMatchObject({ result: "error", msg: "Invalid stream id" });
      expect((await guest.client.get(`/users/me/${shared.id}/topics`)).body).toMatchObject({ result: "error", msg: "Invalid stream id" });
      expect((await bob.client.post(`/messages/${inShared}/reactions`, { emoji_name: "smile" })).body.result).toBe("success");
      // and posts to it (can_send_message_group is everyone).
      expect((await bob.client.post("/messages", { type: "stream", to: shared.name, topic: "t", content: "from bob" })).body.result).toBe("success");

      // Not the protected one; not Carol (not in the group); not the guest (in it, but a guest).
      const invalid = { result: "error", msg: "Invalid message(s)" };
      expect((await bob.client.get(`/messages/${inProtected}`)).body).toMatchObject(invalid);
      expect((await carol.client.get(`/messages/${inShared}`)).body).toMatchObject(invalid);
      expect((await guest.client.get(`/messages/${inShared}`)).body).toMatchObject(invalid);
      expect((await guest.client.post(`/messages/${inShared}/reactions`, { emoji_name: "smile" })).body).toMatchObject(invalid);
      expect((await carol.client.post("/messages", { type: "stream", to: shared.name, topic: "t", content: "x" })).body.result).toBe("error");
      expect((await guest.client.post("/messages", { type: "stream", to: shared.name, topic: "t", content: "x" })).body.result).toBe("error");
      expect((await bob.client.post("/messages", { type: "stream", to: protectedHistory.name, topic: "t", content: "x" })).body.result).toBe("error");
      const guestNarrow = await guest.client.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "stream", operand: shared.id }]) });
      expect(guestNarrow.body.messages ?? []).toEqual([]);

      // Losing the group loses the access (to what Bob has no row for: reacting gave him one).
      const later = await sendStreamMessage(alice.client, shared.name, "topic", "later words");
      expect((await bob.client.get(`/messages/${later}`)).body.result).toBe("success");
      expect((await patch(alice, shared.id, { can_subscribe_group: { new: groups["role:nobody"] } })).body.result).toBe("success");
      expect((await bob.client.get(`/messages/${later}`)).body).toMatchObject(invalid);
    });

    test("a named group's members (through subgroups) read too; another channel's groups give nothing", async () => {
      const made = await admin.client.post("/user_groups/create", { name: `readers ${count}`, description: "r", members: JSON.stringify([carol.id]) });
      expect(made.body.result).toBe("success");
      const readers = made.body.group_id as number;
      const shared = await makeStream(alice, { invite_only: true, history_public_to_subscribers: true, can_add_subscribers_group: anonymous([], [readers]) });
      const other = await makeStream(alice, { invite_only: true, history_public_to_subscribers: true });
      const inShared = await sendStreamMessage(alice.client, shared.name, "t");
      const inOther = await sendStreamMessage(alice.client, other.name, "t");
      expect((await carol.client.get(`/messages/${inShared}`)).body.result).toBe("success");
      expect((await carol.client.get(`/messages/${inOther}`)).body).toMatchObject({ result: "error", msg: "Invalid message(s)" });
    });
  });

  describe("metadata access events (349)", () => {
    test("a channel administrator not subscribed to a private channel sees it and gets its events", async () => {
      const secret = await makeStream(alice, { invite_only: true, can_administer_channel_group: anonymous([alice.id, carol.id]) });
      const registered = (await carol.client.post("/register", { fetch_event_types: ["subscription", "stream"] })).body;
      expect(registered.never_subscribed.map((s: { stream_id: number }) => s.stream_id)).toContain(secret.id);
      expect(registered.streams.map((s: { stream_id: number }) => s.stream_id)).toContain(secret.id);
      // Bob, who has no part in it, does not.
      const bobs = (await bob.client.post("/register", { fetch_event_types: ["subscription", "stream"] })).body;
      expect(bobs.never_subscribed.map((s: { stream_id: number }) => s.stream_id)).not.toContain(secret.id);
      // GET /streams/{id} and GET /streams' include_all show it to her (metadata), not include_can_access_content (content).
      expect((await carol.client.get(`/streams/${secret.id}`)).body).toMatchObject({ result: "success", stream: { stream_id: secret.id } });
      expect((await bob.client.get(`/streams/${secret.id}`)).body).toMatchObject({ result: "error", msg: "Invalid stream id" });
      const listed = async (user: TestUser, flags: Record<string, boolean>) => ((await user.client.get("/streams", flags)).body.streams as Array<{ stream_id: number }>).map((s) => s.stream_id);
      expect(await listed(carol, { include_all: true })).toContain(secret.id);
      expect(await listed(bob, { include_all: true })).not.toContain(secret.id);
      expect(await listed(carol, { include_can_access_content: true })).not.toContain(secret.id);
      const readable = await makeStream(alice, { invite_only: true, can_subscribe_group: anonymous([carol.id]) });
      expect(await listed(carol, { include_can_access_content: true })).toContain(readable.id);
      expect(await listed(guest, { include_all: true, include_can_access_content: true })).not.toContain(readable.id);

      const events = await verifyAction(carol.client, ["subscription", "stream"], () => patch(alice, secret.id, { description: "news for carol" }));
      expect(events).toContainEqual(expect.objectContaining({ type: "stream", op: "update", stream_id: secret.id, property: "description", value: "news for carol" }));

      // Gaining the setting shows the channel (stream create); losing it hides it (stream delete).
      const gained = await verifyAction(bob.client, ["subscription", "stream"], () => patch(alice, secret.id, { can_administer_channel_group: { new: anonymous([alice.id, carol.id, bob.id]) } }));
      expect(gained).toContainEqual(expect.objectContaining({ type: "stream", op: "create" }));
      const lost = await verifyAction(bob.client, ["subscription", "stream"], () => patch(alice, secret.id, { can_administer_channel_group: { new: anonymous([alice.id]) } }));
      expect(lost).toContainEqual(expect.objectContaining({ type: "stream", op: "delete" }));
    });
  });
});

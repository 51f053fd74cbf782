// Custom emoji (POST, GET and DELETE /realm/emoji): Zulip 3.x's name and permission rules, the
// image resized and served, and the emoji usable in messages and reactions, in both modes.
import sharp from "sharp";
import { MAX_EMOJI_FRAMES } from "@chat/core";
import { fetchPublic, imagePart, makeAnimatedGif, makeJpeg, makePng, notAnImage, uploadFiles } from "../support/images.ts";
import { sendStreamMessage } from "../support/messages.ts";
import { STORAGE_SETUPS, startStorageTestServer, type StorageTestServer } from "../support/storage.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { registerState, verifyAction } from "../support/verify-action.ts";

describe.each(STORAGE_SETUPS)("custom emoji ($mode, $backend storage)", ({ mode, backend }) => {
  let server: StorageTestServer;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  let guest: TestUser;
  let realmId: number;

  beforeAll(async () => {
    server = await startStorageTestServer(mode, backend, { MAX_IMAGE_UPLOAD_SIZE_MIB: "1" });
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    other = await createTestUser(server, "Oscar Other");
    guest = await createTestUser(server, "Gil Guest", "guest");
    realmId = (await server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id: member.id } })).realm_id;
  });
  afterAll(() => server.stop());

  const add = (user: TestUser, name: string, image: Buffer, filename = "emoji.png", type = "image/png") =>
    uploadFiles(user.client, `/realm/emoji/${encodeURIComponent(name)}`, [imagePart(image, filename, type)]);
  const rows = () => server.running.services.db.prisma.realmEmoji.findMany({ where: { realm_id: realmId }, orderBy: { id: "asc" } });
  const listed = async (): Promise<Record<string, any>> => (await member.client.get("/realm/emoji")).body.emoji;
  const byName = async (name: string) => Object.values(await listed()).find((e: any) => e.name === name && !e.deactivated) as Record<string, any> | undefined;

  test("a member adds one: listed, sent to everyone, in /register, served at 64 pixels", async () => {
    const image = await makePng(200, 120);
    let answer: Awaited<ReturnType<typeof add>> | undefined;
    const events = await verifyAction(other.client, ["realm_emoji"], async () => {
      answer = await add(member, "my_emoji", image);
    });
    expect(answer!.json).toEqual({ result: "success", msg: "" });
    const emoji = await byName("my_emoji");
    const id = emoji!.id as string;
    expect(emoji).toEqual({
      id,
      name: "my_emoji",
      source_url: `/user_avatars/${realmId}/emoji/images/${id}.png`,
      deactivated: false,
      author: { id: member.id, email: member.email, full_name: "Mia Member" },
      author_id: member.id,
      still_url: null,
    });
    expect(events).toEqual([{ id: expect.any(Number), type: "realm_emoji", op: "update", realm_emoji: expect.objectContaining({ [id]: emoji }) }]);
    expect((await registerState(guest.client, ["realm_emoji"])).state.realm_emoji).toMatchObject({ [id]: emoji });
    expect((await rows()).find((r) => String(r.id) === id)).toMatchObject({ file_name: `${id}.png`, content_type: "image/png", author_id: member.id });

    const res = await fetchPublic(server.baseUrl, emoji!.source_url);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("image/png");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["cache-control"]).toMatch(/^public, max-age=\d{6,}/);
    expect(await sharp(res.body).metadata()).toMatchObject({ format: "png", width: 64, height: 64 });
    // The original is kept beside it, unserved.
    const original = await server.running.services.storage.stat(`avatars/${realmId}/emoji/images/${id}.png.original`);
    expect(original?.size).toBe(image.length);
    expect((await fetchPublic(server.baseUrl, `${emoji!.source_url}.original`)).status).toBe(404);
  });

  test("usable in a message (rendered as an <img> of its URL) and as a reaction", async () => {
    expect((await add(member, "party", await makeJpeg(90, 90), "party.jpg", "image/jpeg")).json.result).toBe("success");
    const emoji = (await byName("party"))!;
    const rendered = await member.client.post("/messages/render", { content: "let's :party:" });
    expect(rendered.body.rendered).toBe(`<p>let's <img alt=":party:" class="emoji" src="${emoji.source_url}" title="party"></p>`);

    const messageId = await sendStreamMessage(member.client, "general", "emoji", "hi :party:");
    const fetched = await member.client.get("/messages", { anchor: messageId, num_before: 0, num_after: 0 });
    expect(fetched.body.messages[0].content).toBe(`<p>hi <img alt=":party:" class="emoji" src="${emoji.source_url}" title="party"></p>`);
    expect((await other.client.post(`/messages/${messageId}/reactions`, { emoji_name: "party" })).body.result).toBe("success");
    const reactions = await server.running.services.db.prisma.reaction.findMany({ where: { message_id: messageId } });
    expect(reactions).toEqual([expect.objectContaining({ user_id: other.id, emoji_name: "party", emoji_code: emoji.id, reaction_type: "realm_emoji" })]);
  });

  test("an animated GIF stays an animated GIF", async () => {
    expect((await add(member, "dance", await makeAnimatedGif(4, 100, 100), "dance.gif", "image/gif")).json.result).toBe("success");
    const emoji = (await byName("dance"))!;
    expect(emoji.source_url).toBe(`/user_avatars/${realmId}/emoji/images/${emoji.id}.gif`);
    const res = await fetchPublic(server.baseUrl, emoji.source_url);
    expect(res.headers["content-type"]).toBe("image/gif");
    expect(await sharp(res.body, { animated: true }).metadata()).toMatchObject({ format: "gif", width: 64, pageHeight: 64, pages: 4 });
  });

  test("spaces become underscores; the name as stored is the one used", async () => {
    expect((await add(member, "  big smile ", await makePng(32, 32))).json.result).toBe("success");
    expect(await byName("big_smile")).toBeDefined();
  });

  describe("refusals write no row", () => {
    async function expectRefused(answer: Promise<{ status: number; json: Record<string, any> }>, msg: string, code = "BAD_REQUEST"): Promise<void> {
      const before = await rows();
      const stored = await server.storedKeys("");
      const res = await answer;
      expect(res.json).toEqual({ result: "error", msg, code });
      expect(res.status).toBe(400);
      expect(await rows()).toEqual(before);
      expect(await server.storedKeys("")).toEqual(stored);
    }

    test.each([
      ["my_em*oji", "Invalid characters in emoji name"],
      ["my_EMoji", "Invalid characters in emoji name"],
      ["my_emoji_", "Invalid characters in emoji name"],
      ["emoji.", "Invalid characters in emoji name"],
      ["é", "Invalid characters in emoji name"],
      [" ", "Emoji name is missing"],
      ["a".repeat(51), "Emoji name is too long"],
    ])("the name %j", async (name, msg) => {
      await expectRefused(add(member, name, await makePng(32, 32)), msg);
    });

    test("a name an active emoji has; a deactivated one's name is free again", async () => {
      expect((await add(member, "twice", await makePng(32, 32))).json.result).toBe("success");
      await expectRefused(add(other, "twice", await makePng(32, 32)), "A custom emoji with this name already exists.");
      expect((await member.client.delete("/realm/emoji/twice")).body.result).toBe("success");
      expect((await add(other, "twice", await makePng(32, 32))).json.result).toBe("success");
      expect((await rows()).filter((r) => r.name === "twice").map((r) => r.deactivated)).toEqual([true, false]);
    });

    test("two uploads of one name at once: one emoji, and the loser's files are removed", async () => {
      const image = await makePng(48, 48);
      const stored = await server.storedKeys("");
      const answers = await Promise.all([add(member, "racing", image), add(other, "racing", image)]);
      expect(answers.map((a) => a.json.result).sort()).toEqual(["error", "success"]);
      expect(answers.find((a) => a.json.result === "error")!.json.msg).toBe("A custom emoji with this name already exists.");
      const winner = (await rows()).filter((r) => r.name === "racing");
      expect(winner).toHaveLength(1);
      // Whatever the loser stored (it may have got as far as its files) is gone: the winner's alone remain.
      const key = `avatars/${realmId}/emoji/images/${winner[0].id}.png`;
      expect(await server.storedKeys("")).toEqual([...stored, key, `${key}.original`].sort());
    });

    test("guests may not add emoji", async () => {
      await expectRefused(add(guest, "guest_emoji", await makePng(32, 32)), "Not allowed for guest users");
    });

    test("with add_emoji_by_admins_only (add_custom_emoji_policy 2), members may not add; authors still remove their own (Zulip 9.0)", async () => {
      expect((await add(member, "authored_before", await makePng(32, 32))).json.result).toBe("success");
      const changed = await verifyAction(member.client, ["realm"], () => admin.client.patch("/realm", { add_emoji_by_admins_only: true }));
      // Zulip 10.0: the boolean sets can_add_custom_emoji_group (feature level 307); a 3.x client hears of the boolean too.
      expect(changed).toEqual([
        { id: expect.any(Number), type: "realm", op: "update_dict", property: "default", data: { can_add_custom_emoji_group: expect.any(Number) } },
        { id: expect.any(Number), type: "realm", op: "update", property: "add_custom_emoji_policy", value: 2 },
        { id: expect.any(Number), type: "realm", op: "update", property: "add_emoji_by_admins_only", value: true },
      ]);
      try {
        await expectRefused(add(member, "admins_only", await makePng(32, 32)), "Insufficient permission");
        expect((await add(admin, "admins_only", await makePng(32, 32))).json.result).toBe("success");
        // Zulip 9.0's check_remove_custom_emoji: the author removes their own whatever the policy for adding.
        expect((await member.client.delete("/realm/emoji/authored_before")).body.result).toBe("success");
        const removal = await member.client.delete("/realm/emoji/admins_only");
        expect(removal.body).toEqual({ result: "error", msg: "Must be an organization administrator or emoji author", code: "BAD_REQUEST" });
        expect((await admin.client.delete("/realm/emoji/admins_only")).body.result).toBe("success");
      } finally {
        await admin.client.patch("/realm", { add_emoji_by_admins_only: false });
      }
    });

    test("no file, or two", async () => {
      await expectRefused(uploadFiles(member.client, "/realm/emoji/nofile", [], { name: "x" }), "You must upload exactly one file.");
      await expectRefused(member.client.post("/realm/emoji/nofile").then((r) => ({ status: r.status, json: r.body })), "You must upload exactly one file.");
      const png = await makePng(16, 16);
      await expectRefused(uploadFiles(member.client, "/realm/emoji/twofiles", [imagePart(png, "a.png"), imagePart(png, "b.png")]), "You must upload exactly one file.");
    });

    test("a file that is not an image", async () => {
      await expectRefused(add(member, "not_image", notAnImage(), "x.gif", "image/gif"), "Could not decode image; did you upload an image file?", "BAD_IMAGE");
    });

    test("an animation of more frames than an emoji may have: each would be scaled to 64×64, however small it came", async () => {
      const frames = MAX_EMOJI_FRAMES + 1;
      await expectRefused(add(member, "too_many_frames", await makeAnimatedGif(frames, 1, 1), "x.gif", "image/gif"), `Animated emoji can have at most ${MAX_EMOJI_FRAMES} frames.`, "BAD_IMAGE");
    });

    test("a file past MAX_IMAGE_UPLOAD_SIZE_MIB", async () => {
      const tooBig = Buffer.concat([await makePng(10, 10), Buffer.alloc(1024 * 1024)]);
      await expectRefused(add(member, "too_big", tooBig), "Uploaded file is larger than the allowed limit of 1 MiB");
    });
  });

  test("DELETE deactivates: listed as deactivated, its image still served for old messages", async () => {
    expect((await add(member, "old_one", await makePng(32, 32))).json.result).toBe("success");
    const emoji = (await byName("old_one"))!;
    const events = await verifyAction(other.client, ["realm_emoji"], () => member.client.delete("/realm/emoji/old_one"));
    expect(events[0].realm_emoji[emoji.id]).toEqual({ ...emoji, deactivated: true });
    expect((await listed())[emoji.id].deactivated).toBe(true);
    expect((await fetchPublic(server.baseUrl, emoji.source_url)).status).toBe(200);
    expect((await member.client.delete("/realm/emoji/old_one")).body).toMatchObject({ result: "error", msg: "Emoji 'old_one' does not exist" });
  });
});

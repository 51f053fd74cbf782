// Organization export and import end to end: an organization with varied data is exported through
// the API by a real worker process (tier processes on Postgres and Redis; the embedded server's own
// worker in the embedded mode), the tarball downloaded and imported with `import-realm` as a new
// organization, whose API answers are then compared with the original's. And an import of a small
// export written here by hand in Zulip 9.0's format (zerver/lib/export.py), extra tables and fields
// included, checked field by field; a broken export leaves nothing behind.
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import request from "supertest";
import { runCli } from "../../apps/server/src/cli-commands.ts";
import { ApiClient } from "../support/client.ts";
import { makePng } from "../support/images.ts";
import { runCliProcess } from "../support/cli-process.ts";
import { startProcess, type ServerProcess } from "../support/processes.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { useTierProcesses } from "../support/tier-processes.ts";
import { download, readExportTarball, waitForExport } from "../support/realm-exports.ts";

jest.setTimeout(300_000);

const ZULIP_HOST = "chat.test";

async function importWithCli(server: TestServer, file: string, subdomain: string): Promise<string> {
  let output = "";
  await runCli(["import-realm", file, "--subdomain", subdomain], server.running.services, { out: (text) => (output += text), input: {} });
  return output;
}

async function devClient(baseUrl: string, email: string, host: string): Promise<ApiClient> {
  const res = await new ApiClient(baseUrl, null, host).post("/dev_fetch_api_key", { username: email });
  if (res.body.result !== "success") throw new Error(`dev_fetch_api_key ${email}@${host}: ${JSON.stringify(res.body)}`);
  return new ApiClient(baseUrl, { email, apiKey: res.body.api_key }, host);
}

function fetchFile(baseUrl: string, target: string, client: ApiClient): request.Test {
  let test = request(baseUrl)
    .get(target)
    .buffer(true)
    .parse((res, callback) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => callback(null, Buffer.concat(parts)));
    });
  if (client.host) test = test.set("Host", client.host);
  return test.auth(client.credentials!.email, client.credentials!.apiKey);
}

// ---------------------------------------------------------------------------------------------
// A hand-made export in Zulip 9.0's format.

const T0 = 1_700_000_000.25;
const UPLOAD_PATH = "7/ab/cDeFgHiJkLmNoPqRsTuVwXyZ/report.txt";

async function writeZulipExport(dir: string): Promise<{ avatar: Buffer; emoji: Buffer }> {
  const avatar = await makePng(200, 200, "#aa3344");
  const emoji = await makePng(64, 64, "#22aa44");
  const user = (id: number, email: string, fullName: string, role: number, recipient: number, extra: Record<string, unknown> = {}) => ({
    id,
    realm: 7,
    email: `user${id}@zulipco.example`,
    delivery_email: email,
    full_name: fullName,
    role,
    is_active: true,
    is_bot: false,
    bot_type: null,
    bot_owner: null,
    recipient,
    avatar_source: "G",
    avatar_version: 1,
    avatar_hash: null,
    date_joined: T0,
    last_login: T0 + 10,
    timezone: "Europe/Paris",
    twenty_four_hour_time: true,
    default_language: "en",
    tos_version: null,
    uuid: `00000000-0000-0000-0000-0000000000${id}`,
    is_mirror_dummy: false,
    email_address_visibility: 1,
    onboarding_steps: [],
    ...extra,
  });
  const realm = {
    zerver_realm: [
      {
        id: 7,
        string_id: "zulipco",
        name: "Zulip Co",
        description: "Our **team**",
        date_created: T0,
        deactivated: false,
        invite_required: true,
        new_stream_announcements_stream: 30,
        signup_announcements_stream: 30,
        zulip_update_announcements_stream: 30,
        mandatory_topics: true,
        message_content_edit_limit_seconds: 3600,
        uuid: "11111111-2222-3333-4444-555555555555",
        org_type: 10,
        plan_type: 1,
        can_create_public_channel_group: 50,
      },
    ],
    zerver_userprofile: [
      user(10, "iris@zulipco.example", "Iris Owner", 100, 100, { avatar_source: "U", avatar_version: 3 }),
      user(11, "jon@zulipco.example", "Jon Member", 400, 101),
      user(12, "kim@zulipco.example", "Kim Guest", 600, 102),
      user(13, "helper-bot@zulipco.example", "Helper", 400, 103, { is_bot: true, bot_type: 1, bot_owner: 10 }),
      user(14, "gone@zulipco.example", "Gone User", 400, 104, { is_active: false }),
    ],
    zerver_userprofile_crossrealm: [
      { id: 1, email: "notification-bot@zulip.com", email_address_visibility: 1 },
      { id: 2, email: "welcome-bot@zulip.com", email_address_visibility: 1 },
    ],
    zerver_userprofile_mirrordummy: [],
    zerver_stream: [
      {
        id: 30,
        realm: 7,
        name: "general",
        description: "Everyone",
        // HTML an export holds is never served as it came.
        rendered_description: '<p>Everyone</p><script>alert("x")</script>',
        invite_only: false,
        is_web_public: false,
        history_public_to_subscribers: true,
        date_created: T0,
        recipient: 200,
        deactivated: false,
        stream_post_policy: 1,
        message_retention_days: null,
        first_message_id: 1000,
        can_remove_subscribers_group: 50,
        creator: 10,
        is_in_zephyr_realm: false,
      },
      { id: 31, realm: 7, name: "secret plans", description: "", rendered_description: "", invite_only: true, is_web_public: false, history_public_to_subscribers: false, date_created: T0, recipient: 201, deactivated: false, stream_post_policy: 1, first_message_id: 1002, can_remove_subscribers_group: 50 },
    ],
    zerver_huddle: [{ id: 40, huddle_hash: "0123456789abcdef0123456789abcdef01234567", recipient: 300, group_size: 3 }],
    zerver_recipient: [
      { id: 100, type: 1, type_id: 10 },
      { id: 101, type: 1, type_id: 11 },
      { id: 102, type: 1, type_id: 12 },
      { id: 103, type: 1, type_id: 13 },
      { id: 104, type: 1, type_id: 14 },
      { id: 200, type: 2, type_id: 30 },
      { id: 201, type: 2, type_id: 31 },
      { id: 300, type: 3, type_id: 40 },
    ],
    zerver_subscription: [
      ...[10, 11, 12, 13, 14].map((u, i) => ({ id: 500 + i, user_profile: u, recipient: 100 + i, active: true, is_user_active: u !== 14, color: "#c2c2c2", is_muted: false, pin_to_top: false })),
      ...[10, 11, 12, 13].map((u, i) => ({
        id: 510 + i,
        user_profile: u,
        recipient: 200,
        active: true,
        is_user_active: true,
        color: u === 11 ? "#76ce90" : "#c2c2c2",
        is_muted: false,
        pin_to_top: u === 11,
        desktop_notifications: null,
        audible_notifications: null,
        push_notifications: null,
        email_notifications: null,
        wildcard_mentions_notify: null,
      })),
      { id: 520, user_profile: 10, recipient: 201, active: true, is_user_active: true, color: "#e79ab5", is_muted: true, pin_to_top: false },
      { id: 521, user_profile: 11, recipient: 201, active: true, is_user_active: true, color: "#e79ab5", is_muted: false, pin_to_top: false },
      ...[10, 11, 12].map((u, i) => ({ id: 530 + i, user_profile: u, recipient: 300, active: true, is_user_active: true, color: "#c2c2c2", is_muted: false, pin_to_top: false })),
    ],
    zerver_realmemoji: [{ id: 60, realm: 7, name: "party_parrot", author: 10, file_name: "60.png", deactivated: false, is_animated: false }],
    zerver_realmfilter: [{ id: 70, realm: 7, pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example/issue/{id}", order: 0 }],
    zerver_usergroup: [
      { id: 50, realm: 7 },
      { id: 51, realm: 7 },
    ],
    zerver_namedusergroup: [
      { usergroup_ptr: 51, realm_for_sharding: 7, name: "support", named: true, description: "Support team", is_system_group: false, can_mention_group: 50, deactivated: false },
    ],
    zerver_usergroupmembership: [
      { id: 1, user_group: 51, user_profile: 11 },
      { id: 2, user_group: 51, user_profile: 12 },
    ],
    zerver_groupgroupmembership: [],
    zerver_customprofilefield: [
      { id: 80, realm: 7, name: "Phone", hint: "Your number", field_type: 1, field_data: "", order: 0, display_in_profile_summary: false, required: false },
      { id: 81, realm: 7, name: "Mentor", hint: "", field_type: 6, field_data: "", order: 1, display_in_profile_summary: false, required: false },
    ],
    zerver_customprofilefieldvalue: [
      { id: 1, user_profile: 11, field: 80, value: "+1 555 0100", rendered_value: null },
      { id: 2, user_profile: 12, field: 81, value: "[11]", rendered_value: null },
    ],
    zerver_defaultstream: [{ id: 1, realm: 7, stream: 30 }],
    zerver_defaultstreamgroup: [],
    zerver_usertopic: [{ id: 1, user_profile: 11, stream: 30, recipient: 200, topic_name: "lunch", last_updated: T0, visibility_policy: 3 }],
    zerver_reaction: [
      { id: 90, message: 1000, user_profile: 11, emoji_name: "thumbs_up", emoji_code: "1f44d", reaction_type: "unicode_emoji" },
      { id: 91, message: 1000, user_profile: 12, emoji_name: "party_parrot", emoji_code: "60", reaction_type: "realm_emoji" },
    ],
    zerver_client: [
      { id: 3, name: "website" },
      { id: 4, name: "ZulipMobile" },
    ],
    // Tables this server has no use for: read past, not refused.
    zerver_realmauditlog: [{ id: 1, realm: 7, event_type: 215, event_time: T0, acting_user: 10, extra_data: {} }],
    zerver_realmdomain: [],
    zerver_realmplayground: [{ id: 3, realm: 7, name: "Python playground", pygments_language: "python", url_template: "https://play.example/?code={code}" }],
    zerver_realmuserdefault: [{ id: 1, realm: 7, enter_sends: true, emojiset: "text", web_home_view: "inbox" }],
    zerver_muteduser: [{ id: 4, user_profile: 11, muted_user: 12, date_muted: T0 }],
    zerver_useractivity: [],
    zerver_scheduledmessage: [],
    zerver_onboardingstep: [],
  };
  const um = (message: number, userProfile: number, flags: number) => ({ id: message * 10 + userProfile, message, user_profile: userProfile, flags_mask: flags });
  const message = (id: number, sender: number, recipient: number, subject: string, content: string, extra: Record<string, unknown> = {}) => ({
    id,
    sender,
    recipient,
    realm: 7,
    subject,
    content,
    rendered_content: "<p>rendered by Zulip</p>",
    rendered_content_version: 1,
    date_sent: T0 + id,
    sending_client: 3,
    last_edit_time: null,
    edit_history: null,
    has_attachment: false,
    has_image: false,
    has_link: false,
    type: 1,
    is_channel_message: recipient >= 200 && recipient < 300,
    ...extra,
  });
  const messages = {
    zerver_message: [
      message(1000, 10, 200, "lunch", "Hello @**Jon Member**, see #123 and :party_parrot:", {
        last_edit_time: T0 + 1200,
        // Zulip 9.0's edit history: a JSON string, newest edit first; the HTML is never taken.
        edit_history: JSON.stringify([
          { user_id: 11, timestamp: Math.floor(T0 + 1200), prev_topic: "food", topic: "lunch", prev_stream: 31, stream: 30 },
          { user_id: 10, timestamp: Math.floor(T0 + 1100), prev_content: "Hello @**Kim Guest**", prev_rendered_content: "<script>alert(1)</script>", prev_rendered_content_version: 1 },
          { user_id: 999, timestamp: "yesterday", prev_topic: "dropped" },
        ]),
      }),
      message(1001, 11, 200, "lunch", `[report.txt](/user_uploads/${UPLOAD_PATH})`, { has_attachment: true, has_link: true, sending_client: 4 }),
      message(1002, 10, 201, "plans", "Secret stuff"),
      message(1003, 10, 101, "", "Hi Jon"),
      message(1004, 12, 300, "", "Group chat"),
      message(1005, 1, 100, "", "Welcome to Zulip!"),
    ],
    zerver_usermessage: [
      um(1000, 10, 1),
      um(1000, 11, 2 | 8),
      um(1000, 12, 0),
      um(1000, 13, 0),
      um(1001, 10, 0),
      um(1001, 11, 1),
      um(1001, 12, 0),
      um(1002, 10, 1),
      um(1002, 11, 0),
      um(1003, 10, 1 | 2048),
      um(1003, 11, 2048),
      um(1004, 10, 2048),
      um(1004, 11, 2048),
      um(1004, 12, 1 | 2048),
      um(1005, 10, 2048),
    ],
  };
  const attachments = {
    zerver_attachment: [
      { id: 5, owner: 11, realm: 7, file_name: "report.txt", path_id: UPLOAD_PATH, size: 11, create_time: T0, is_realm_public: true, is_web_public: false, content_type: "text/plain", messages: [1001], scheduled_messages: [] },
    ],
  };
  await mkdir(path.join(dir, "uploads", path.dirname(UPLOAD_PATH)), { recursive: true });
  await mkdir(path.join(dir, "avatars", "7"), { recursive: true });
  await mkdir(path.join(dir, "emoji", "7", "emoji", "images"), { recursive: true });
  await writeFile(path.join(dir, "realm.json"), JSON.stringify(realm));
  await writeFile(path.join(dir, "messages-000001.json"), JSON.stringify(messages));
  await writeFile(path.join(dir, "attachment.json"), JSON.stringify(attachments));
  await writeFile(path.join(dir, "uploads", UPLOAD_PATH), "hello world");
  await writeFile(
    path.join(dir, "uploads", "records.json"),
    JSON.stringify([{ path: UPLOAD_PATH, s3_path: UPLOAD_PATH, realm_id: 7, user_profile_id: 11, user_profile_email: "jon@zulipco.example", size: 11, last_modified: T0, content_type: "text/plain", md5: "5eb63bbbe01eeed093cb22bb8f5acdc3" }]),
  );
  await writeFile(path.join(dir, "avatars", "7", "4e6f1a2b3c.original"), avatar);
  await writeFile(path.join(dir, "avatars", "7", "4e6f1a2b3c.png"), avatar);
  await writeFile(
    path.join(dir, "avatars", "records.json"),
    JSON.stringify(
      [".original", ".png"].map((suffix) => ({ path: `7/4e6f1a2b3c${suffix}`, s3_path: `7/4e6f1a2b3c${suffix}`, realm_id: 7, user_profile_id: 10, user_profile_email: "iris@zulipco.example", content_type: "image/png", size: avatar.length })),
    ),
  );
  await writeFile(path.join(dir, "emoji", "7", "emoji", "images", "60.png"), emoji);
  await writeFile(
    path.join(dir, "emoji", "records.json"),
    JSON.stringify([{ realm_id: 7, author: 10, deactivated: false, file_name: "60.png", id: 60, name: "party_parrot", path: "7/emoji/images/60.png", s3_path: "7/emoji/images/60.png" }]),
  );
  return { avatar, emoji };
}

describe.each(MODES)("importing an export in Zulip's format (%s)", (mode) => {
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer(mode);
    dir = await mkdtemp(path.join(tmpdir(), "zulip-export-"));
    await writeZulipExport(path.join(dir, "zulip-export-abc"));
  });
  afterAll(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("users, streams, subscriptions, messages, reactions, flags, files, emoji, groups, fields and defaults come over with new ids", async () => {
    const tarball = path.join(dir, "zulip-export-abc.tar.gz");
    // GNU tar's own output, as Zulip's export tarball is.
    execFileSync("tar", ["-czf", tarball, "-C", dir, "zulip-export-abc"]);
    const output = await importWithCli(server, tarball, "zulipco");
    expect(output).toMatch(/^imported realm \d+ "Zulip Co" at subdomain "zulipco": 7 users, 2 streams, 6 messages, 5 files\n/);
    const host = `zulipco.${ZULIP_HOST}`;
    const iris = await devClient(server.baseUrl, "iris@zulipco.example", host);
    const jon = await devClient(server.baseUrl, "jon@zulipco.example", host);
    const kim = await devClient(server.baseUrl, "kim@zulipco.example", host);

    // Users: roles, bots and their owners, the deactivated one; no passwords came.
    const users = (await iris.get("/users")).body.members as Array<Record<string, any>>;
    const byEmail = new Map(users.map((u) => [u.delivery_email ?? u.email, u]));
    expect(byEmail.get("iris@zulipco.example")).toMatchObject({ full_name: "Iris Owner", role: 100, is_active: true, timezone: "Europe/Paris" });
    expect(byEmail.get("jon@zulipco.example")).toMatchObject({ role: 400, is_bot: false });
    expect(byEmail.get("kim@zulipco.example")).toMatchObject({ role: 600 });
    const irisId = byEmail.get("iris@zulipco.example")!.user_id as number;
    const jonId = byEmail.get("jon@zulipco.example")!.user_id as number;
    const kimId = byEmail.get("kim@zulipco.example")!.user_id as number;
    expect(byEmail.get("helper-bot@zulipco.example")).toMatchObject({ is_bot: true, bot_type: 1, bot_owner_id: irisId });
    expect(byEmail.get("gone@zulipco.example")).toMatchObject({ is_active: false });
    expect([irisId, jonId, kimId]).not.toContain(10);
    const login = await new ApiClient(server.baseUrl, null, host).post("/fetch_api_key", { username: "iris@zulipco.example", password: "" });
    expect(login.body.result).toBe("error");

    // The organization's settings.
    const state = (await iris.post("/register", { fetch_event_types: ["realm", "realm_emoji", "realm_linkifiers", "realm_user_groups", "custom_profile_fields", "default_streams", "user_topic"], client_capabilities: JSON.stringify({ linkifier_url_template: true }) })).body;
    expect(state).toMatchObject({ realm_name: "Zulip Co", realm_description: "Our **team**", realm_mandatory_topics: true, realm_message_content_edit_limit_seconds: 3600 });
    const streams = (await iris.get("/streams")).body.streams as Array<Record<string, any>>;
    const general = streams.find((s) => s.name === "general")!;
    const secret = streams.find((s) => s.name === "secret plans")!;
    expect(secret).toMatchObject({ invite_only: true, history_public_to_subscribers: false });
    expect(general.first_message_id).toBeGreaterThan(0);
    expect(general.rendered_description).toBe("<p>Everyone</p>");
    expect(state.realm_notifications_stream_id ?? state.realm_new_stream_announcements_stream_id).toBe(general.stream_id);
    // Ids for a client with a modern capability (feature level 330), as this one is.
    expect(state.realm_default_streams).toEqual([general.stream_id]);
    expect(Object.values(state.realm_emoji as Record<string, Record<string, unknown>>)).toEqual([expect.objectContaining({ name: "party_parrot", author_id: irisId, deactivated: false })]);
    expect(state.realm_linkifiers).toEqual([expect.objectContaining({ pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example/issue/{id}" })]);
    const support = (state.realm_user_groups as Array<Record<string, any>>).find((g) => g.name === "support");
    expect(support).toMatchObject({ description: "Support team" });
    expect([...support!.members].sort()).toEqual([jonId, kimId].sort());
    const fields = state.custom_profile_fields as Array<Record<string, any>>;
    expect(fields.map((f) => [f.name, f.type, f.hint])).toEqual([
      ["Phone", 1, "Your number"],
      ["Mentor", 6, ""],
    ]);
    const jonProfile = (await iris.get(`/users/${jonId}`, { include_custom_profile_fields: true })).body.user.profile_data;
    expect(jonProfile[String(fields[0].id)]).toMatchObject({ value: "+1 555 0100" });
    const kimProfile = (await iris.get(`/users/${kimId}`, { include_custom_profile_fields: true })).body.user.profile_data;
    expect(JSON.parse(kimProfile[String(fields[1].id)].value)).toEqual([jonId]);

    // Subscriptions with their settings; Jon follows a topic.
    const jonSubs = (await jon.get("/users/me/subscriptions")).body.subscriptions as Array<Record<string, any>>;
    expect(jonSubs.map((s) => s.name).sort()).toEqual(["general", "secret plans"]);
    expect(jonSubs.find((s) => s.name === "general")).toMatchObject({ color: "#76ce90", pin_to_top: true });
    expect((await iris.get("/users/me/subscriptions")).body.subscriptions.find((s: { name: string }) => s.name === "secret plans")).toMatchObject({ is_muted: true });
    const jonState = (await jon.post("/register", { fetch_event_types: ["user_topic", "muted_users"] })).body;
    expect(jonState.muted_users).toEqual([{ id: kimId, timestamp: Math.floor(T0) }]);
    const defaults = (await iris.post("/register", { fetch_event_types: ["realm_playgrounds", "realm_user_settings_defaults"] })).body;
    expect(defaults.realm_playgrounds).toEqual([{ id: expect.any(Number), name: "Python playground", pygments_language: "python", url_template: "https://play.example/?code={code}" }]);
    expect(defaults.realm_user_settings_defaults).toMatchObject({ enter_sends: true, emojiset: "text" });
    expect(jonState.user_topics).toEqual([{ stream_id: general.stream_id, topic_name: "lunch", last_updated: expect.any(Number), visibility_policy: 3 }]);

    // Messages: rendered again with the new ids; flags, reactions, clients and times kept.
    const jonMessages = (await jon.get("/messages", { anchor: "oldest", num_before: 0, num_after: 100, apply_markdown: true })).body.messages as Array<Record<string, any>>;
    expect(jonMessages.map((m) => m.content.replace(/<[^>]+>/g, "").trim().slice(0, 12))).toHaveLength(5);
    const hello = jonMessages.find((m) => m.subject === "lunch" && m.sender_id === irisId)!;
    expect(hello.content).toContain(`data-user-id="${jonId}"`);
    // Linkified unless the renderer's time budget for linkifiers ran out (a loaded machine's first
    // compile of the pattern can take it all): then the text stays plain, as a send would leave it.
    expect(hello.content).toMatch(/href="https:\/\/tracker\.example\/issue\/123"|see #123 and/);
    const emojiId = Object.keys(state.realm_emoji)[0];
    expect(hello.content).toContain(`/user_avatars/${state.realm_emoji[emojiId].source_url.split("/")[2]}/emoji/images/${emojiId}.png`);
    expect(emojiId).not.toBe("60");
    expect(hello.flags.sort()).toEqual(["mentioned", "starred"]);
    expect(hello.timestamp).toBe(Math.floor(T0 + 1000));
    expect(hello.client).toBe("website");
    expect(hello.reactions.map((r: Record<string, unknown>) => [r.emoji_name, r.reaction_type, r.user_id])).toEqual(
      expect.arrayContaining([
        ["thumbs_up", "unicode_emoji", jonId],
        ["party_parrot", "realm_emoji", kimId],
      ]),
    );
    expect(hello.reactions.find((r: { emoji_name: string }) => r.emoji_name === "party_parrot").emoji_code).toBe(emojiId);
    const withUpload = jonMessages.find((m) => m.content.includes("report.txt"))!;
    expect(withUpload.client).toBe("ZulipMobile");
    expect(withUpload.flags).toEqual(["read"]);
    const link = /href="(\/user_uploads\/[^"]+)"/.exec(withUpload.content)![1];
    expect(link).not.toContain(UPLOAD_PATH);
    expect(link).toMatch(/^\/user_uploads\/\d+\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{24}\/report\.txt$/);
    const fetched = await fetchFile(server.baseUrl, link, kim);
    expect(fetched.status).toBe(200);
    expect(fetched.body.toString()).toBe("hello world");
    expect(jonMessages.find((m) => m.content.includes("Hi Jon"))).toMatchObject({ type: "private", sender_id: irisId });
    const group = jonMessages.find((m) => m.content.includes("Group chat"))!;
    expect(group.display_recipient.map((r: { id: number }) => r.id).sort()).toEqual([irisId, jonId, kimId].sort());
    // Its edit history, with the new ids, the earlier content rendered again.
    const history = (await jon.get(`/messages/${hello.id}/history`)).body.message_history as Array<Record<string, any>>;
    expect(history).toEqual([
      expect.objectContaining({ user_id: irisId, timestamp: Math.floor(T0 + 1000), topic: "food", content: "Hello @**Kim Guest**" }),
      expect.objectContaining({ user_id: irisId, timestamp: Math.floor(T0 + 1100), topic: "food", prev_content: "Hello @**Kim Guest**", content: expect.stringContaining("@**Jon Member**") }),
      expect.objectContaining({ user_id: jonId, timestamp: Math.floor(T0 + 1200), prev_topic: "food", topic: "lunch", prev_stream: secret.stream_id, stream: general.stream_id }),
    ]);
    expect(history[0].rendered_content).toContain(`data-user-id="${kimId}"`);
    expect(history[1].prev_rendered_content).toBe(history[0].rendered_content);
    expect(JSON.stringify(history)).not.toContain("<script>");
    // Feature level 365: the content's last edit, and the last move, each from the history.
    expect(hello.last_edit_timestamp).toBe(Math.floor(T0 + 1100));
    expect(hello.last_moved_timestamp).toBe(Math.floor(T0 + 1200));
    // The secret stream's history is not Kim's.
    const kimMessages = (await kim.get("/messages", { anchor: "oldest", num_before: 0, num_after: 100 })).body.messages as Array<Record<string, any>>;
    expect(kimMessages.some((m) => m.content.includes("Secret stuff"))).toBe(false);
    expect(kimMessages.find((m) => m.content.includes("Group chat"))!.flags).toEqual(["read"]);
    // A reply in the imported group conversation lands in the same conversation.
    const reply = await jon.post("/messages", { type: "private", to: JSON.stringify([irisId, kimId]), content: "Still here" });
    expect(reply.body.result).toBe("success");
    const after = (await jon.get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: JSON.stringify([{ operator: "dm", operand: [irisId, kimId] }]) })).body.messages;
    expect(after).toHaveLength(1);
    const groupAfter = (await jon.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: "dm", operand: [irisId, kimId] }]) })).body.messages;
    expect(groupAfter.map((m: { content: string }) => m.content.replace(/<[^>]+>/g, ""))).toEqual(["Group chat", "Still here"]);

    // The system bot's welcome went to Iris from this organization's Notification Bot.
    const irisMessages = (await iris.get("/messages", { anchor: "oldest", num_before: 0, num_after: 100 })).body.messages as Array<Record<string, any>>;
    expect(irisMessages.find((m) => m.content.includes("Welcome to Zulip!"))).toMatchObject({ sender_email: expect.stringMatching(/^notification-bot@/) });

    // The avatar was made again from its original; the emoji's image was copied.
    const me = (await iris.get("/users/me")).body;
    expect(me.avatar_url).toMatch(new RegExp(`^/user_avatars/\\d+/${irisId}\\.png\\?version=3$`));
    const avatarFile = await request(server.baseUrl).get(me.avatar_url).set("Host", host);
    expect(avatarFile.status).toBe(200);
    expect(avatarFile.headers["content-type"]).toBe("image/png");
    const emojiFile = await request(server.baseUrl).get(state.realm_emoji[emojiId].source_url).set("Host", host);
    expect(emojiFile.status).toBe(200);
  });

  test("the subdomain must be free and the folder an export; a broken export leaves no organization or file behind", async () => {
    await expect(importWithCli(server, path.join(dir, "zulip-export-abc"), "zulipco")).rejects.toThrow("Subdomain 'zulipco' is already in use");
    await expect(importWithCli(server, dir + "/nowhere", "elsewhere")).rejects.toThrow("no such file");
    await expect(importWithCli(server, path.join(dir, "zulip-export-abc", "uploads"), "elsewhere")).rejects.toThrow("it holds no realm.json");

    const broken = path.join(dir, "broken");
    await writeZulipExport(broken);
    await writeFile(path.join(broken, "messages-000002.json"), "{ not json");
    const storage = server.running.services.storage;
    const put = storage.put.bind(storage);
    const written: string[] = [];
    storage.put = async (key, body, options) => {
      written.push(key);
      return put(key, body, options);
    };
    try {
      await expect(importWithCli(server, broken, "broken")).rejects.toThrow("messages-000002.json is not JSON");
    } finally {
      storage.put = put;
    }
    expect(written.length).toBeGreaterThan(0);
    for (const key of written) expect(await storage.stat(key)).toBeNull();
    expect(await server.running.services.db.prisma.realm.findUnique({ where: { string_id: "broken" } })).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------
// Round trip: export through the API, import with the CLI, compare.

interface Origin {
  baseUrl: string;
  /** A client of the organization's owner (API tier). */
  owner: ApiClient;
  /** Where /register is answered. */
  eventsUrl: string;
  importTarball(file: string, subdomain: string): Promise<void>;
}

/** Fills the organization with varied data through the API. */
async function populate(origin: Origin, server: { createUser(name: string, role?: "admin" | "member" | "guest"): Promise<{ id: number; email: string; client: ApiClient }> }) {
  const { owner } = origin;
  const ann = await server.createUser("Ann Admin", "admin");
  const bob = await server.createUser("Bob Member");
  const cat = await server.createUser("Cat Guest", "guest");
  const ok = <R extends { body: any }>(res: R, what: string): R => {
    if (res.body.result !== "success") throw new Error(`${what}: ${JSON.stringify(res.body)}`);
    return res;
  };
  ok(await owner.post("/users/me/subscriptions", { subscriptions: [{ name: "design", description: "Pixels and **type**" }], principals: [ann.id, bob.id, cat.id] }), "subscribe design");
  ok(await owner.post("/users/me/subscriptions", { subscriptions: [{ name: "ops", description: "" }], principals: [ann.id, bob.id] }), "subscribe ops");
  ok(await owner.post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://issues.example/{id}" }), "linkifier");
  ok(await owner.raw("post", "/realm/emoji/blob").attach("file", await makePng(64, 64, "#3366cc"), "blob.png"), "emoji");
  ok(await bob.client.raw("post", "/users/me/avatar").attach("file", await makePng(120, 120, "#aa7700"), "me.png"), "avatar");
  const upload = ok(await bob.client.raw("post", "/user_uploads").attach("file", Buffer.from("quarterly numbers"), "numbers.txt"), "upload");
  ok(await owner.post("/user_groups/create", { name: "designers", description: "People who draw", members: JSON.stringify([ann.id, bob.id]) }), "group");
  ok(await owner.post("/realm/profile_fields", { name: "Team", hint: "Which team", field_type: 1 }), "profile field");
  const streams = (await owner.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>;
  ok(await owner.post("/default_streams", { stream_id: streams.find((s) => s.name === "design")!.stream_id }), "default stream");
  const sent: number[] = [];
  const send = async (client: ApiClient, params: Record<string, unknown>) => sent.push(ok(await client.post("/messages", params), "send").body.id);
  await send(owner, { type: "stream", to: "design", topic: "kickoff", content: "Welcome @**Bob Member**! See #42 :blob: and #**ops**" });
  await send(bob.client, { type: "stream", to: "design", topic: "kickoff", content: `Thanks, **boss**: [the numbers](${upload.body.url})` });
  await send(ann.client, { type: "stream", to: "ops", topic: "deploys", content: "Deploy at 5" });
  // (ops keeps a message when this one moves away, as its first_message_id stays in the original.)
  await send(ann.client, { type: "stream", to: "ops", topic: "deploys", content: "Deploy at 6" });
  for (let i = 0; i < 25; i++) await send(cat.client, { type: "stream", to: "design", topic: `batch ${i % 3}`, content: `message number ${i}` });
  ok(await bob.client.post(`/messages/${sent[0]}/reactions`, { emoji_name: "blob", reaction_type: "realm_emoji", emoji_code: "" }).then(async (r) => (r.body.result === "success" ? r : bob.client.post(`/messages/${sent[0]}/reactions`, { emoji_name: "blob" }))), "realm emoji reaction");
  ok(await cat.client.post(`/messages/${sent[0]}/reactions`, { emoji_name: "octopus" }), "reaction");
  ok(await bob.client.post("/messages/flags", { messages: JSON.stringify([sent[0]]), op: "add", flag: "starred" }), "star");
  ok(await bob.client.post("/messages/flags", { messages: JSON.stringify(sent.slice(0, 3)), op: "add", flag: "read" }), "read");
  // Edit history: Bob edits his message's content twice; the owner moves Ann's to another topic and stream.
  ok(await bob.client.patch(`/messages/${sent[1]}`, { content: `Thanks, **boss** @**Ann Admin**: [the numbers](${upload.body.url})` }), "edit content");
  ok(await bob.client.patch(`/messages/${sent[1]}`, { content: `Thanks, **boss**: [the numbers](${upload.body.url}) (updated)` }), "edit content again");
  const streamsNow = (await owner.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>;
  ok(await owner.patch(`/messages/${sent[2]}`, { topic: "releases", stream_id: streamsNow.find((s) => s.name === "design")!.stream_id, propagate_mode: "change_one" }), "move");
  ok(await owner.patch(`/messages/${sent[2]}`, { topic: "releases 2", propagate_mode: "change_one" }), "rename topic");
  return { ann, bob, cat, uploadUrl: upload.body.url as string, edited: [sent[1], sent[2]] };
}

/** HTML (or Markdown) with the organization's ids taken out, to compare two organizations. */
const strip = (html: string) =>
  html
    .replace(/data-user-id="\d+"/g, "")
    .replace(/data-stream-id="\d+"/g, "")
    .replace(/\/stream\/\d+-/g, "/stream/N-")
    // A topic link names the topic's latest message when it is written (feature level 347); an
    // import renders messages again without that message, and links the topic itself.
    .replace(/(class="stream-topic"[^>]*href="[^"]*)\/with\/\d+"/g, '$1"')
    .replace(/\/emoji\/images\/\d+\./g, "/emoji/images/N.").replace(/\/user_uploads\/\d+\/[^"]+/g, "UPLOAD").replace(/\/user_avatars\/\d+\//g, "/user_avatars/R/");

/** GET /messages/{id}/history with users and streams by name and the HTML's ids taken out. */
async function historyView(client: ApiClient, messageId: number) {
  const users = (await client.get("/users")).body.members as Array<Record<string, any>>;
  const email = new Map(users.map((u) => [u.user_id as number, u.email as string]));
  const streams = (await client.get("/streams")).body.streams as Array<Record<string, any>>;
  const streamName = new Map(streams.map((s) => [s.stream_id as number, s.name as string]));
  const res = await client.get(`/messages/${messageId}/history`);
  if (res.body.result !== "success") throw new Error(`history of ${messageId}: ${JSON.stringify(res.body)}`);
  return (res.body.message_history as Array<Record<string, any>>).map((entry) =>
    Object.fromEntries(
      Object.entries(entry).map(([key, value]) => [
        key,
        key === "user_id" ? email.get(value) : key === "stream" || key === "prev_stream" ? streamName.get(value) : typeof value === "string" && key !== "topic" && key !== "prev_topic" ? strip(value) : value,
      ]),
    ),
  );
}

/** What a member sees, with ids replaced by what they name, to compare two organizations. */
async function view(baseUrl: string, eventsUrl: string, client: ApiClient) {
  const users = (await client.get("/users")).body.members as Array<Record<string, any>>;
  const email = new Map(users.map((u) => [u.user_id as number, u.email as string]));
  const streams = (await client.get("/streams")).body.streams as Array<Record<string, any>>;
  const streamName = new Map(streams.map((s) => [s.stream_id as number, s.name as string]));
  const onEvents = new ApiClient(eventsUrl, client.credentials, client.host);
  const state = (await onEvents.post("/register", { fetch_event_types: ["realm", "realm_user", "subscription", "realm_emoji", "realm_linkifiers", "realm_user_groups", "custom_profile_fields", "default_streams", "message", "update_message_flags"], include_subscribers: true, client_capabilities: JSON.stringify({ linkifier_url_template: true }) })).body;
  const messages = (await client.get("/messages", { anchor: "oldest", num_before: 0, num_after: 1000, apply_markdown: true })).body.messages as Array<Record<string, any>>;
  // Group settings by the group's name.
  const groupName = new Map((state.realm_user_groups as Array<{ id: number; name: string }>).map((g) => [g.id, g.name]));
  const realmScalars = Object.fromEntries(
    Object.entries(state)
      .filter(([key, value]) => key.startsWith("realm_") && (typeof value !== "object" || value === null) && !/(_id|_url|_uri|url_template|date_created|realm_icon|realm_logo|night_logo)/.test(key))
      .map(([key, value]) => [key, /_groups?$/.test(key) && typeof value === "number" ? groupName.get(value) : value])
      .sort(),
  );
  return {
    users: users.map((u) => ({ email: u.email, full_name: u.full_name, role: u.role, is_bot: u.is_bot, is_active: u.is_active, timezone: u.timezone, avatar: u.avatar_url === null ? null : String(u.avatar_url).replace(/\d+/g, "N") })).sort((a, b) => a.email.localeCompare(b.email)),
    streams: streams.map((s) => ({ name: s.name, description: s.description, rendered_description: s.rendered_description, invite_only: s.invite_only, first: s.first_message_id !== null })).sort((a, b) => a.name.localeCompare(b.name)),
    subscriptions: (state.subscriptions as Array<Record<string, any>>).map((s) => ({ name: s.name, color: s.color, is_muted: s.is_muted, pin_to_top: s.pin_to_top, subscribers: s.subscribers.map((id: number) => email.get(id)).sort() })).sort((a, b) => a.name.localeCompare(b.name)),
    realm: realmScalars,
    emoji: Object.values(state.realm_emoji as Record<string, Record<string, any>>).map((e) => ({ name: e.name, author: email.get(e.author_id), deactivated: e.deactivated })),
    linkifiers: state.realm_linkifiers.map((l: Record<string, unknown>) => ({ pattern: l.pattern, url_template: l.url_template })),
    groups: (state.realm_user_groups as Array<Record<string, any>>).map((g) => ({ name: g.name, description: g.description, members: g.members.map((id: number) => email.get(id)).sort() })).sort((a, b) => a.name.localeCompare(b.name)),
    fields: state.custom_profile_fields.map((f: Record<string, unknown>) => ({ name: f.name, hint: f.hint, type: f.type })),
    default_streams: state.realm_default_streams.map((s: { name: string }) => s.name).sort(),
    // The stream messages, but for those of streams named "private…".
    unread: state.unread_msgs.streams.map((u: { topic: string; unread_message_ids: number[] }) => `${u.topic}:${u.unread_message_ids.length}`).sort(),
    messages: messages.filter((m) => m.type === "stream" && !streamName.get(m.stream_id)!.startsWith("private")).map((m) => ({
      sender: m.sender_email,
      to: m.type === "stream" ? streamName.get(m.stream_id) : "dm",
      topic: m.subject,
      content: strip(m.content),
      flags: [...m.flags].sort(),
      client: m.client,
      timestamp: m.timestamp,
      reactions: m.reactions.map((r: Record<string, any>) => `${r.emoji_name}:${r.reaction_type}:${email.get(r.user_id)}`).sort(),
    })),
  };
}

/** A user's private data (which only an export with their consent holds), ids replaced by what they name. */
async function privateView(eventsUrl: string, client: ApiClient) {
  const users = (await client.get("/users")).body.members as Array<{ user_id: number; email: string }>;
  const email = new Map(users.map((u) => [u.user_id, u.email]));
  const streams = (await client.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>;
  const streamName = new Map(streams.map((s) => [s.stream_id, s.name]));
  const onEvents = new ApiClient(eventsUrl, client.credentials, client.host);
  const state = (await onEvents.post("/register", { fetch_event_types: ["alert_words", "muted_users", "user_topic"] })).body;
  return {
    alert_words: state.alert_words,
    muted_users: (state.muted_users as Array<{ id: number }>).map((m) => email.get(m.id)),
    user_topics: (state.user_topics as Array<{ stream_id: number; topic_name: string; visibility_policy: number }>).map((t) => [streamName.get(t.stream_id), t.topic_name, t.visibility_policy]),
  };
}

async function roundTrip(origin: Origin, createUser: Parameters<typeof populate>[1]["createUser"], clientAt: (email: string, host?: string) => Promise<ApiClient>) {
  const { ann, bob, cat, uploadUrl, edited } = await populate(origin, { createUser });
  // A full export with every member's consent (export_type 2): a public one holds none of their
  // private data (subscriptions' colours and muting, personal settings), which the copy is
  // compared on (test/api/realm-export-privacy.test.ts checks what a public one leaves out).
  for (const client of [origin.owner, ann.client, bob.client, cat.client]) {
    expect((await client.patch("/settings", { allow_private_data_export: true })).body.result).toBe("success");
  }
  // Private data of Bob's that such an export carries.
  const designId = ((await bob.client.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>).find((s) => s.name === "design")!.stream_id;
  expect((await bob.client.post("/users/me/alert_words", { alert_words: JSON.stringify(["quarterly"]) })).body.result).toBe("success");
  expect((await bob.client.post(`/users/me/muted_users/${cat.id}`)).body.result).toBe("success");
  expect((await bob.client.post("/user_topics", { stream_id: designId, topic: "batch 1", visibility_policy: 1 })).body.result).toBe("success");
  const requested = await origin.owner.post("/export/realm", { export_type: 2 });
  expect(requested.body.result).toBe("success");
  const done = await waitForExport(origin.owner, requested.body.id, 120_000);
  expect(done.failed_timestamp).toBeNull();
  const got = await download(origin.baseUrl, done.export_url, origin.owner.credentials);
  expect(got.status).toBe(200);
  const files = await readExportTarball(got.body as Buffer);
  expect([...files.keys()].filter((f) => f.startsWith("uploads/") && f !== "uploads/records.json")).toHaveLength(1);
  const dir = await mkdtemp(path.join(tmpdir(), "round-trip-"));
  try {
    const tarball = path.join(dir, "export.tar.gz");
    await writeFile(tarball, got.body as Buffer);
    await origin.importTarball(tarball, "copy");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const copyHost = `copy.${ZULIP_HOST}`;
  const bobThere = await clientAt(bob.email, copyHost);
  const bobHere = await clientAt(bob.email);
  const privateBefore = await privateView(origin.eventsUrl, bobHere);
  expect(privateBefore).toEqual({ alert_words: ["quarterly"], muted_users: [cat.email], user_topics: expect.arrayContaining([["design", "batch 1", 1]]) });
  expect(await privateView(origin.eventsUrl, bobThere)).toEqual(privateBefore);
  const before = await view(origin.baseUrl, origin.eventsUrl, bobHere);
  const after = await view(origin.baseUrl, origin.eventsUrl, bobThere);
  expect(after).toEqual(before);
  expect(before.messages.length).toBeGreaterThanOrEqual(28);
  // Edit histories (of the stream messages): the same edits, by
  // the same users, between the same streams, ids mapped; the
  // export wrote them in Zulip's form, and each edited message has its last_edit_time.
  const hereIds = ((await bobHere.get("/messages", { anchor: "oldest", num_before: 0, num_after: 1000 })).body.messages as Array<{ id: number; type: string }>).filter((m) => m.type === "stream").map((m) => m.id);
  const thereIds = ((await bobThere.get("/messages", { anchor: "oldest", num_before: 0, num_after: 1000 })).body.messages as Array<{ id: number; type: string }>).filter((m) => m.type === "stream").map((m) => m.id);
  expect(thereIds).toHaveLength(hereIds.length);
  for (const id of edited) {
    const copyId = thereIds[hereIds.indexOf(id)];
    expect(copyId).not.toBe(id);
    const original = await historyView(bobHere, id);
    expect(original.length).toBe(3);
    expect(await historyView(bobThere, copyId)).toEqual(original);
  }
  expect(await historyView(bobThere, thereIds[hereIds.indexOf(edited[1])])).toEqual([
    expect.objectContaining({ topic: "deploys" }),
    expect.objectContaining({ user_id: expect.any(String), prev_stream: "ops", stream: "design", prev_topic: "deploys", topic: "releases" }),
    expect.objectContaining({ prev_topic: "releases", topic: "releases 2" }),
  ]);
  const exported = JSON.parse(files.get("messages-000001.json")!.toString()).zerver_message as Array<Record<string, any>>;
  const editedRow = exported.find((m) => m.id === edited[0])!;
  expect(typeof editedRow.edit_history).toBe("string");
  expect(editedRow.last_edit_time).toEqual(expect.any(Number));
  const entries = JSON.parse(editedRow.edit_history);
  expect(entries).toEqual([
    expect.objectContaining({ user_id: bob.id, prev_content: expect.stringContaining("@**Ann Admin**"), prev_rendered_content: expect.stringContaining("user-mention"), prev_rendered_content_version: expect.any(Number) }),
    expect.objectContaining({ user_id: bob.id, prev_content: expect.stringMatching(/^Thanks, \*\*boss\*\*: \[the numbers\]\([^)]+\)$/) }),
  ]);
  expect(entries[0].timestamp).toBeGreaterThanOrEqual(entries[1].timestamp);
  expect(exported.find((m) => m.id === hereIds[0])!.edit_history).toBeNull();
  // The upload is readable in the copy, with the same bytes.
  const withUpload = ((await bobThere.get("/messages", { anchor: "oldest", num_before: 0, num_after: 100 })).body.messages as Array<{ content: string }>).find((m) => m.content.includes("/user_uploads/"))!;
  const link = /href="(\/user_uploads\/[^"]+)"/.exec(withUpload.content)![1];
  expect(link).not.toBe(uploadUrl);
  const copied = await fetchFile(origin.baseUrl, link, bobThere);
  expect(copied.status).toBe(200);
  expect(copied.body.toString()).toBe("quarterly numbers");
  // New API keys; no password came.
  expect(bobThere.credentials!.apiKey).not.toBe(bobHere.credentials!.apiKey);
  const login = await new ApiClient(origin.baseUrl, null, copyHost).post("/fetch_api_key", { username: bob.email, password: "member-pass" });
  expect(login.body.result).toBe("error");
}

/** Creates users through the owner of a server process, logging them in with the development login. */
function userMaker(baseUrl: string, owner: ApiClient): Parameters<typeof populate>[1]["createUser"] {
  return async (name, role = "member") => {
    const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}@example.com`;
    const created = await owner.post("/users", { email, password: "member-pass", full_name: name, short_name: name.split(" ")[0] });
    if (created.body.result !== "success") throw new Error(JSON.stringify(created.body));
    const roles = { admin: 200, member: 400, guest: 600 };
    if (role !== "member") await owner.patch(`/users/${created.body.user_id}`, { role: roles[role] });
    return { id: created.body.user_id, email, client: await devClient(baseUrl, email, ZULIP_HOST) };
  };
}

// Declared only when TEST_MODES selects postgres, so that no skipped test stands in for it.
if (MODES.includes("postgres")) describe("round trip through a real worker process (postgres, tier processes)", () => {
  let dataDir: string;
  const tiers = useTierProcesses({ EXTERNAL_HOST: ZULIP_HOST, RATE_LIMITING: "false" });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "export-tiers-"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  test("an organization exported by the worker and imported by the CLI answers as the original", async () => {
    const settings = { DATA_DIR: dataDir };
    const api = await tiers.start("api", settings);
    const events = await tiers.start("events", settings);
    await tiers.start("worker", settings);
    const baseUrl = `http://127.0.0.1:${api.port}`;
    const owner = await tiers.owner(api);
    await roundTrip(
      {
        baseUrl,
        owner,
        eventsUrl: `http://127.0.0.1:${events.port}`,
        async importTarball(file, subdomain) {
          const result = await runCliProcess(["import-realm", file, "--subdomain", subdomain], {
            // The CLI writes to the database itself (no server owns it); the new organization has
            // no clients yet for its events to reach.
            DATABASE_URL: tiers.databaseUrl(),
            DATA_DIR: dataDir,
            EXTERNAL_HOST: ZULIP_HOST,
          });
          if (result.code !== 0) throw new Error(`import-realm failed (${result.code}):\n${result.stdout}\n${result.stderr}`);
          expect(result.stdout).toMatch(/^imported realm \d+ ".*" at subdomain "copy": \d+ users/);
        },
      },
      userMaker(baseUrl, owner),
      (email, host = ZULIP_HOST) => devClient(baseUrl, email, host),
    );
  });
});

// Declared only when TEST_MODES selects embedded, so that no skipped test stands in for it.
if (MODES.includes("embedded")) describe("round trip on the embedded server (a server process and its own worker; the CLI over the operators' channel)", () => {
  let dataDir: string;
  let server: ServerProcess | null = null;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "export-embedded-"));
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test("an organization exported and imported answers as the original", async () => {
    const ownerEmail = "owner@example.com";
    server = await startProcess({
      ROLE: "all",
      PORT: "0",
      BIND_ADDRESS: "127.0.0.1",
      DEV_MODE: "true",
      EXTERNAL_HOST: ZULIP_HOST,
      DATA_DIR: dataDir,
      RATE_LIMITING: "false",
      BOOTSTRAP_OWNER_EMAIL: ownerEmail,
      BOOTSTRAP_OWNER_PASSWORD: "owner-password",
    });
    const baseUrl = `http://127.0.0.1:${server.port}`;
    const owner = await devClient(baseUrl, ownerEmail, ZULIP_HOST);
    await roundTrip(
      {
        baseUrl,
        owner,
        eventsUrl: baseUrl,
        async importTarball(file, subdomain) {
          // The server owns the embedded database: the CLI hands it the command.
          const result = await runCliProcess(["import-realm", path.relative(process.cwd(), file), "--subdomain", subdomain], { DATA_DIR: dataDir, EXTERNAL_HOST: ZULIP_HOST });
          if (result.code !== 0) throw new Error(`import-realm failed (${result.code}):\n${result.stdout}\n${result.stderr}`);
          expect(result.stdout).toMatch(/^imported realm \d+ ".*" at subdomain "copy": \d+ users/);
        },
      },
      userMaker(baseUrl, owner),
      (email, host = ZULIP_HOST) => devClient(baseUrl, email, host),
    );
  });
});

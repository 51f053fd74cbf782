// POST /realm/deactivate (feature level 332's deletion_delay_days) and the worker's sweep that
// deletes a deactivated organization's data once its scheduled_deletion_date has passed: every row
// of that organization, in every table, and its stored files; nothing of any other organization.
import http from "node:http";
import { createRealm, sweepDeactivatedRealms } from "@chat/core";
import { imagePart, makePng, rawRequest, type FilePart } from "../support/images.ts";
import { MODES, OWNER_EMAIL, startSecondNode, startTestServer, type TestServer } from "../support/server.ts";
import { ApiClient } from "../support/client.ts";

interface World {
  realmId: number;
  host: string;
  owner: ApiClient;
  admin: ApiClient;
  member: ApiClient;
  memberId: number;
  streamId: number;
  messageIds: number[];
  uploadKeys: string[];
  /** The stored piece of an unfinished resumable (tus) upload. */
  tusPieceKey: string;
}

function upload(client: ApiClient, path: string, file: FilePart) {
  const boundary = "realm-deactivate-boundary";
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\nContent-Type: ${file.contentType}\r\n\r\n`),
    file.data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const { email, apiKey } = client.credentials!;
  const headers: Record<string, string> = {
    authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}`,
    "content-type": `multipart/form-data; boundary=${boundary}`,
  };
  if (client.host) headers.host = client.host;
  return rawRequest(client.baseUrl, "POST", `/api/v1${path}`, headers, body);
}

/** A tus request (outside the API document, so not checked against it): its status and headers. */
function tusRequest(baseUrl: string, method: string, target: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: target, headers: body ? { ...headers, "content-length": String(body.length) } : headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function ok(res: Promise<{ body: Record<string, any> }>, what: string): Promise<Record<string, any>> {
  const { body } = await res;
  if (body.result !== "success") throw new Error(`${what}: ${JSON.stringify(body)}`);
  return body;
}

/** An organization with users, a stream, messages, an upload, a reaction, a group, a draft, emoji... */
async function populate(server: TestServer, owner: ApiClient, host: string | undefined, tag: string): Promise<World> {
  const prisma = server.running.services.db.prisma;
  const makeUser = async (name: string, role?: number) => {
    const email = `${name}.${tag}@example.com`;
    const created = await ok(owner.post("/users", { email, password: "member-pass", full_name: `${name} ${tag}`, short_name: name }), "user");
    if (role !== undefined) await ok(owner.patch(`/users/${created.user_id}`, { role }), "role");
    const login = await ok((host ? server.anonymousAt(host) : server.anonymous).post("/fetch_api_key", { username: email, password: "member-pass" }), "login");
    return { id: created.user_id as number, client: server.client(email, login.api_key, host) };
  };
  const member = await makeUser("member");
  const admin = await makeUser("admin", 200);
  const streamName = `deletable ${tag}`;
  await ok(owner.post("/users/me/subscriptions", { subscriptions: [{ name: streamName, description: "d" }], principals: [member.id, admin.id] }), "subscribe");
  const streamId = (await ok(owner.get("/get_stream_id", { stream: streamName }), "stream id")).stream_id as number;
  const uploaded = (await upload(member.client, "/user_uploads", imagePart(await makePng(4, 4), `pic-${tag}.png`))).json;
  if (uploaded.result !== "success") throw new Error(`upload: ${JSON.stringify(uploaded)}`);
  const url = uploaded.url as string;
  const emoji = (await upload(owner, `/realm/emoji/emo_${tag}`, imagePart(await makePng(8, 8), "e.png"))).json;
  if (emoji.result !== "success") throw new Error(`emoji: ${JSON.stringify(emoji)}`);
  const messageIds: number[] = [];
  messageIds.push((await ok(member.client.post("/messages", { type: "stream", to: streamId, topic: "t", content: `a file [pic](${url})` }), "stream message")).id);
  messageIds.push((await ok(owner.post("/messages", { type: "direct", to: JSON.stringify([member.id]), content: "hello" }), "dm")).id);
  await ok(admin.client.post(`/messages/${messageIds[0]}/reactions`, { emoji_name: "smile" }), "reaction");
  await ok(member.client.post(`/messages/${messageIds[1]}/reactions`, { emoji_name: `emo_${tag}`, reaction_type: "realm_emoji", emoji_code: String((await prisma.realmEmoji.findFirstOrThrow({ where: { name: `emo_${tag}` } })).id) }), "emoji reaction");
  await ok(member.client.post("/messages/flags", { messages: JSON.stringify(messageIds), op: "add", flag: "starred" }), "star");
  await ok(owner.post("/user_groups/create", { name: `group ${tag}`, description: "g", members: JSON.stringify([member.id, admin.id]) }), "group");
  await ok(member.client.post("/drafts", { drafts: JSON.stringify([{ type: "stream", to: [streamId], topic: "draft", content: "unsent", timestamp: 1_700_000_000 }]) }), "draft");
  await ok(member.client.post("/users/me/alert_words", { alert_words: JSON.stringify([`word${tag}`]) }), "alert word");
  await ok(member.client.post(`/users/me/muted_users/${admin.id}`), "mute");
  await ok(member.client.patch(`/messages/${messageIds[0]}`, { content: `edited [pic](${url})` }), "edit");
  await ok(owner.post("/realm/filters", { pattern: `#${tag}(?P<id>[0-9]+)`, url_template: "https://x.test/{id}" }), "linkifier");
  // An unfinished resumable upload with one piece stored.
  const { email, apiKey } = member.client.credentials!;
  const tusHeaders: Record<string, string> = { "tus-resumable": "1.0.0", authorization: `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}`, ...(host ? { host } : {}) };
  const created = await tusRequest(member.client.baseUrl, "POST", "/api/v1/tus", { ...tusHeaders, "upload-length": "10" });
  if (created.status !== 201) throw new Error(`tus creation: ${created.status}`);
  const location = created.headers.location as string;
  const patched = await tusRequest(member.client.baseUrl, "PATCH", location, { ...tusHeaders, "upload-offset": "0", "content-type": "application/offset+octet-stream" }, Buffer.from("hello"));
  if (patched.status !== 204) throw new Error(`tus patch: ${patched.status}`);
  const tusPieceKey = `tus/${location.split("/").pop()}/0`;
  const realm = await prisma.userProfile.findFirstOrThrow({ where: { id: member.id } });
  const uploadKeys = (await prisma.$queryRawUnsafe<Array<{ path_id: string }>>("SELECT path_id FROM attachment WHERE realm_id = $1", realm.realm_id)).map((row) => `uploads/${row.path_id}`);
  return { realmId: realm.realm_id, host: host ?? "", owner, admin: admin.client, member: member.client, memberId: member.id, streamId, messageIds, uploadKeys, tusPieceKey };
}

type Sql = <T>(text: string, ...params: unknown[]) => Promise<T[]>;

interface ForeignKey {
  child: string;
  column: string;
  parent: string;
  parentColumn: string;
}

/**
 * Rows that belong to `realmId`, per table, counted independently of the code under test: rows with
 * its realm_id, and rows whose foreign key names one of the realm's rows in a realm_id table
 * (users, messages, streams, recipients, groups, attachments, ...), taken from ids listed up front.
 */
async function realmRows(sql: Sql, realmId: number): Promise<Record<string, number>> {
  const realmTables = (await sql<{ name: string }>("SELECT table_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'realm_id'")).map((r) => r.name);
  const baseTables = new Set((await sql<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")).map((r) => r.name));
  const keys = await sql<ForeignKey>(`
    SELECT cl.relname AS child, a.attname AS column, pl.relname AS parent, pa.attname AS "parentColumn"
    FROM pg_constraint k JOIN pg_class cl ON cl.oid = k.conrelid JOIN pg_class pl ON pl.oid = k.confrelid
    JOIN pg_namespace n ON n.oid = cl.relnamespace
    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
    JOIN pg_attribute pa ON pa.attrelid = k.confrelid AND pa.attnum = k.confkey[1]
    WHERE k.contype = 'f' AND n.nspname = current_schema()`);
  const counts: Record<string, number> = {};
  const [realm] = await sql<{ n: number }>("SELECT count(*)::int AS n FROM realm WHERE id = $1", realmId);
  counts.realm = realm.n;
  for (const table of realmTables) {
    if (!baseTables.has(table)) continue;
    const [row] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}" WHERE realm_id = $1`, realmId);
    counts[table] = row.n;
  }
  // Second level: rows of any table pointing at one of the realm's rows (user_message, reaction, ...).
  const ids = new Map<string, unknown[]>();
  for (const key of keys) {
    if (!realmTables.includes(key.parent) || key.parent === key.child || !baseTables.has(key.child)) continue;
    const parentIds = ids.get(`${key.parent}.${key.parentColumn}`) ?? (await sql<{ v: unknown }>(`SELECT "${key.parentColumn}" AS v FROM "${key.parent}" WHERE realm_id = $1`, realmId)).map((r) => r.v);
    ids.set(`${key.parent}.${key.parentColumn}`, parentIds);
    if (parentIds.length === 0) {
      counts[`${key.child}.${key.column}->${key.parent}`] = 0;
      continue;
    }
    const [row] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM "${key.child}" WHERE "${key.column}" = ANY($1)`, parentIds);
    counts[`${key.child}.${key.column}->${key.parent}`] = row.n;
  }
  // user_message has no foreign keys (dropped for the speed of sends, migration 0009): by hand.
  const [userMessages] = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM user_message WHERE user_id IN (SELECT id FROM user_profile WHERE realm_id = $1) OR message_id IN (SELECT id FROM message WHERE realm_id = $1)`,
    realmId,
  );
  counts["user_message.by_hand"] = userMessages.n;
  return counts;
}

const nonZero = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));

describe.each(MODES)("POST /realm/deactivate (%s)", (mode) => {
  let server: TestServer;
  let root: World;
  let acme: World;
  let sql: Sql;

  beforeAll(async () => {
    server = await startTestServer(mode);
    const { services } = server.running;
    const prisma = services.db.prisma;
    sql = <T>(text: string, ...params: unknown[]) => prisma.$queryRawUnsafe<T[]>(text, ...params);
    const { owner } = await services.actions.run(0, (tx, events) =>
      createRealm(tx, events, services.ctx, { subdomain: "acme", name: "Acme", owner: { email: OWNER_EMAIL, fullName: "Acme Owner", password: "acme-password" } }),
    );
    root = await populate(server, server.owner, undefined, "root");
    acme = await populate(server, server.client(OWNER_EMAIL, owner.api_key, "acme.chat.test"), "acme.chat.test", "acme");
  }, 120_000);
  afterAll(() => server.stop());

  async function queuedEvents(queueId: string): Promise<Array<Record<string, unknown>>> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const events = (await server.running.services.bus.queues.read(queueId, -1)) ?? [];
      if (events.some((e) => e.type === "realm") || Date.now() > deadline) return events as Array<Record<string, unknown>>;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  test("only owners: an administrator gets Zulip's error, even with a bad value", async () => {
    for (const params of [{}, { deletion_delay_days: 30 }, { deletion_delay_days: "nope" }]) {
      const res = await acme.admin.post("/realm/deactivate", params);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ result: "error", msg: "Must be an organization owner", code: "UNAUTHORIZED_PRINCIPAL" });
    }
    const res = await acme.member.post("/realm/deactivate");
    expect(res.body.code).toBe("UNAUTHORIZED_PRINCIPAL");
    expect((await sql<{ deactivated: boolean }>("SELECT deactivated FROM realm WHERE id = $1", acme.realmId))[0].deactivated).toBe(false);
  });

  test.each([
    [13, "Data deletion time must be at least 14 days in the future."],
    [0, "Data deletion time must be at least 14 days in the future."],
    [-5, "Data deletion time must be at least 14 days in the future."],
  ])("deletion_delay_days %j below the server's minimum is refused", async (days, msg) => {
    const res = await acme.owner.post("/realm/deactivate", { deletion_delay_days: days });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
    expect((await sql<{ deactivated: boolean }>("SELECT deactivated FROM realm WHERE id = $1", acme.realmId))[0].deactivated).toBe(false);
  });

  test("a delay no date can hold is refused, not a server error", async () => {
    const res = await acme.owner.post("/realm/deactivate", { deletion_delay_days: 2_147_483_647 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Data deletion time must be at most 1000000 days in the future.", code: "BAD_REQUEST" });
    expect((await sql<{ deactivated: boolean }>("SELECT deactivated FROM realm WHERE id = $1", acme.realmId))[0].deactivated).toBe(false);
  });

  test.each([["1.5"], ["\"14\""], ["[]"], ["99999999999999"]])("a deletion_delay_days that is not an integer (%s) is a JSON error", async (raw) => {
    const res = await acme.owner.post("/realm/deactivate", { deletion_delay_days: raw });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
  });

  test("/register still reports the bounds the endpoint enforces", async () => {
    const state = (await acme.member.post("/register", { fetch_event_types: ["realm"] })).body;
    expect(state).toMatchObject({ server_min_deactivated_realm_deletion_days: 14, server_max_deactivated_realm_deletion_days: null });
  });

  test("an owner deactivates: the event reaches every user, the date is stored, access ends at once on every node", async () => {
    // A second node that has already authenticated the member (its actor cache holds them).
    const node = mode === "postgres" ? await startSecondNode(server) : null;
    try {
      const onOtherNode = node ? new ApiClient(node.client(null).baseUrl, acme.member.credentials, acme.host) : null;
      if (onOtherNode) expect((await onOtherNode.get("/users/me")).body.result).toBe("success");
      const memberQueue = (await acme.member.post("/register", { event_types: ["realm"] })).body.queue_id as string;
      const adminQueue = (await acme.admin.post("/register", { event_types: ["realm"] })).body.queue_id as string;
      const rootQueue = (await root.member.post("/register", { event_types: ["realm"] })).body.queue_id as string;
      const before = Date.now();
      const res = await acme.owner.post("/realm/deactivate", { deletion_delay_days: 30 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: "success", msg: "" });
      const [row] = await sql<{ deactivated: boolean; scheduled_deletion_date: Date }>("SELECT deactivated, scheduled_deletion_date FROM realm WHERE id = $1", acme.realmId);
      expect(row.deactivated).toBe(true);
      const days = (row.scheduled_deletion_date.getTime() - before) / 86_400_000;
      expect(days).toBeGreaterThan(29.99);
      expect(days).toBeLessThan(30.01);
      // The event is in each user's queue (read through the queue store: the API now refuses them).
      for (const queue of [memberQueue, adminQueue]) expect(await queuedEvents(queue)).toContainEqual({ id: expect.any(Number), type: "realm", op: "deactivated", realm_id: acme.realmId });
      // The other organization's users get nothing, and still work.
      await new Promise((r) => setTimeout(r, 300));
      const rootEvents = (await root.member.get("/events", { queue_id: rootQueue, last_event_id: -1, dont_block: true })).body.events as Array<Record<string, any>>;
      expect(rootEvents.filter((e) => e.type === "realm")).toEqual([]);
      // Every request of the organization is refused now, on this node and the other.
      for (const client of [acme.member, acme.owner, acme.admin, ...(onOtherNode ? [onOtherNode] : [])]) {
        const refused = await client.get("/users/me");
        expect(refused.status).toBe(401);
        expect(refused.body).toEqual({ result: "error", msg: "This organization has been deactivated", code: "REALM_DEACTIVATED" });
      }
      expect((await acme.owner.get("/messages", { anchor: "newest", num_before: 5, num_after: 0 })).body.code).toBe("REALM_DEACTIVATED");
      expect((await root.member.get("/users/me")).body.result).toBe("success");
    } finally {
      await node?.stop();
    }
  });

  test("a sweep before the date deletes nothing", async () => {
    const before = await realmRows(sql, acme.realmId);
    await sweepDeactivatedRealms(server.running.services.db.prisma, server.running.services.storage);
    expect(await realmRows(sql, acme.realmId)).toEqual(before);
  });

  test("once the date has passed, the sweep deletes every row and file of that organization, and nothing of the other", async () => {
    const { storage } = server.running.services;
    const acmeBefore = nonZero(await realmRows(sql, acme.realmId));
    const rootBefore = await realmRows(sql, root.realmId);
    // The world really has rows in many tables, in both organizations.
    for (const table of ["message", "user_message", "reaction", "attachment", "user_group", "draft", "stream", "subscription", "realm_emoji", "alert_word", "realm_filter"]) {
      expect([table, Object.keys(acmeBefore).some((key) => key === table || key.startsWith(`${table}.`))]).toEqual([table, true]);
      expect([table, Object.entries(rootBefore).some(([key, n]) => (key === table || key.startsWith(`${table}.`)) && n > 0)]).toEqual([table, true]);
    }
    expect(acme.uploadKeys.length).toBeGreaterThan(0);
    for (const key of [...acme.uploadKeys, ...root.uploadKeys, acme.tusPieceKey, root.tusPieceKey]) expect(await storage.stat(key)).not.toBeNull();
    const emojiFiles = await sql<{ realm_id: number; file_name: string }>("SELECT realm_id, file_name FROM realm_emoji WHERE file_name IS NOT NULL");
    const emojiKey = (e: { realm_id: number; file_name: string }) => `avatars/${e.realm_id}/emoji/images/${e.file_name}`;
    for (const e of emojiFiles) expect(await storage.stat(emojiKey(e))).not.toBeNull();

    // recipient has no realm_id and no key to anything: its rows are the ones the realm's rows name.
    const recipientsOf = async (realmId: number) =>
      (
        await sql<{ id: number }>(
          `SELECT recipient_id AS id FROM user_profile WHERE realm_id = $1 UNION SELECT recipient_id FROM stream WHERE realm_id = $1
           UNION SELECT recipient_id FROM huddle WHERE realm_id = $1 UNION SELECT recipient_id FROM message WHERE realm_id = $1`,
          realmId,
        )
      )
        .map((r) => r.id)
        .filter((id) => id !== null);
    const countRecipients = async (ids: number[]) => (await sql<{ n: number }>("SELECT count(*)::int AS n FROM recipient WHERE id = ANY($1)", ids))[0].n;
    const acmeRecipients = await recipientsOf(acme.realmId);
    const rootRecipients = await recipientsOf(root.realmId);
    expect(await countRecipients(acmeRecipients)).toBeGreaterThanOrEqual(4);
    const rootRecipientCount = await countRecipients(rootRecipients);

    await sql("UPDATE realm SET scheduled_deletion_date = now() - interval '1 minute' WHERE id = $1", acme.realmId);
    expect(await sweepDeactivatedRealms(server.running.services.db.prisma, storage)).toBe(1);

    const after = await realmRows(sql, acme.realmId);
    expect(nonZero(after)).toEqual({});
    // Every table was looked at: it has a realm_id, or a key to a table that does, or is the server's.
    const tables = (await sql<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")).map((r) => r.name);
    const counted = new Set(Object.keys(after).map((key) => key.split(".")[0]));
    expect(tables.filter((table) => !counted.has(table)).sort()).toEqual(["_prisma_migrations", "recipient", "server_secret"]);
    expect(await countRecipients(acmeRecipients)).toBe(0);
    expect(await countRecipients(rootRecipients)).toBe(rootRecipientCount);
    expect(await realmRows(sql, root.realmId)).toEqual(rootBefore);
    for (const key of acme.uploadKeys) expect(await storage.stat(key)).toBeNull();
    for (const key of root.uploadKeys) expect(await storage.stat(key)).not.toBeNull();
    // An unfinished resumable upload's piece goes with its organization.
    expect(await storage.stat(acme.tusPieceKey)).toBeNull();
    expect(await storage.stat(root.tusPieceKey)).not.toBeNull();
    for (const e of emojiFiles) {
      if (e.realm_id === acme.realmId) expect(await storage.stat(emojiKey(e))).toBeNull();
      else expect(await storage.stat(emojiKey(e))).not.toBeNull();
    }
    // A second sweep has nothing left to do.
    expect(await sweepDeactivatedRealms(server.running.services.db.prisma, storage)).toBe(0);
  });

  test("the other organization still works through the API", async () => {
    const messages = (await root.member.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "stream", operand: root.streamId }]) })).body;
    expect(messages.result).toBe("success");
    expect(messages.messages.map((m: { id: number }) => m.id)).toContain(root.messageIds[0]);
    const sent = await root.member.post("/messages", { type: "stream", to: root.streamId, topic: "after", content: "still here" });
    expect(sent.body.result).toBe("success");
    expect((await root.owner.get("/user_groups")).body.user_groups.some((g: { name: string }) => g.name === "group root")).toBe(true);
    expect((await root.member.get("/drafts")).body.drafts).toHaveLength(1);
    // The deleted organization's host names no organization now.
    const gone = await acme.owner.get("/users/me");
    expect([gone.status, gone.body]).toEqual([404, expect.anything()]);
    expect(gone.body.code).toBe("NONEXISTENT_SUBDOMAIN");
  });

  test("without deletion_delay_days (or null) the data is kept: no date", async () => {
    const { services } = server.running;
    const { owner } = await services.actions.run(0, (tx, events) =>
      createRealm(tx, events, services.ctx, { subdomain: "keep", name: "Keep", owner: { email: OWNER_EMAIL, fullName: "Keep Owner", password: "keep-password" } }),
    );
    const keep = server.client(OWNER_EMAIL, owner.api_key, "keep.chat.test");
    const queue = (await keep.post("/register", { event_types: ["realm"] })).body.queue_id as string;
    expect((await keep.post("/realm/deactivate", { deletion_delay_days: "null" })).body).toEqual({ result: "success", msg: "" });
    const [row] = await sql<{ deactivated: boolean; scheduled_deletion_date: Date | null }>("SELECT deactivated, scheduled_deletion_date FROM realm WHERE id = $1", owner.realm_id);
    expect(row).toEqual({ deactivated: true, scheduled_deletion_date: null });
    expect(await queuedEvents(queue)).toEqual([{ id: expect.any(Number), type: "realm", op: "deactivated", realm_id: owner.realm_id }]);
    expect(await sweepDeactivatedRealms(services.db.prisma, services.storage)).toBe(0);
    expect((await sql<{ n: number }>("SELECT count(*)::int AS n FROM user_profile WHERE realm_id = $1", owner.realm_id))[0].n).toBeGreaterThan(0);
  });
});

// schema.prisma and the hand-written SQL migrations must describe the same database: every model's
// table and every scalar field's column (type and nullability) exist, nothing extra exists, and
// every model can be written and read back through Prisma, on Postgres and on PGlite.
import { readFileSync } from "node:fs";
import path from "node:path";
import { applyMigrations, listMigrations, MigrationError, openDatabase, pgliteExecutor, type Database } from "@chat/db";
import { createTestDatabase, type TestDatabase } from "../../../test/support/services.ts";

interface SchemaField {
  name: string;
  type: string;
  optional: boolean;
}

const SCALARS: Record<string, string> = {
  Int: "integer",
  String: "text",
  Boolean: "boolean",
  DateTime: "timestamp with time zone",
  BigInt: "bigint",
  Json: "jsonb",
  Bytes: "bytea",
};

/** The tables and scalar columns schema.prisma declares (a small parser for our own schema's style). */
function parseSchema(): Map<string, SchemaField[]> {
  const text = readFileSync(path.resolve(__dirname, "../../../prisma/schema.prisma"), "utf8");
  const tables = new Map<string, SchemaField[]>();
  for (const match of text.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    const body = match[2];
    const table = /@@map\("(\w+)"\)/.exec(body)?.[1] ?? match[1];
    const fields: SchemaField[] = [];
    for (const line of body.split("\n")) {
      const field = /^\s+(\w+)\s+(\w+)(\?|\[\])?/.exec(line);
      if (!field || line.trim().startsWith("//") || line.trim().startsWith("@@")) continue;
      if (!(field[2] in SCALARS)) continue;
      // A scalar list is an array column, which Prisma leaves nullable (relation lists have no column).
      if (field[3] === "[]") {
        fields.push({ name: field[1], type: "ARRAY", optional: true });
        continue;
      }
      // A native type annotation overrides the default column type (json instead of jsonb).
      const type = /@db\.Json\b/.test(line) ? "json" : SCALARS[field[2]];
      fields.push({ name: field[1], type, optional: field[3] === "?" });
    }
    tables.set(table, fields);
  }
  return tables;
}

async function columns(db: Database): Promise<Map<string, Map<string, { type: string; nullable: boolean }>>> {
  const rows = await db.prisma.$queryRaw<{ table_name: string; column_name: string; data_type: string; is_nullable: string }[]>`
    SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`;
  const tables = new Map<string, Map<string, { type: string; nullable: boolean }>>();
  for (const row of rows) {
    const table = tables.get(row.table_name) ?? new Map();
    table.set(row.column_name, { type: row.data_type, nullable: row.is_nullable === "YES" });
    tables.set(row.table_name, table);
  }
  return tables;
}

async function writeAndReadEveryModel(db: Database): Promise<void> {
  const p = db.prisma;
  const realm = await p.realm.create({ data: { string_id: "roundtrip", name: "Round Trip", upload_quota_bytes: 1n << 40n } });
  const recipient = await p.recipient.create({ data: { type: 1, type_id: 1 } });
  const user = await p.userProfile.create({ data: { realm_id: realm.id, email: "a@x.io", delivery_email: "a@x.io", full_name: "A", api_key: "k".repeat(32), recipient_id: recipient.id } });
  const bot = await p.userProfile.create({ data: { realm_id: realm.id, email: "b@x.io", delivery_email: "b@x.io", full_name: "B", api_key: "b".repeat(32), is_bot: true, bot_type: 3, bot_owner_id: user.id } });
  await p.service.create({ data: { user_id: bot.id, name: "hook", base_url: "http://127.0.0.1/hook", token: "t" } });
  const streamRecipient = await p.recipient.create({ data: { type: 2, type_id: 1 } });
  const stream = await p.stream.create({ data: { realm_id: realm.id, name: "s", email_token: "e", recipient_id: streamRecipient.id } });
  await p.huddle.create({ data: { realm_id: realm.id, huddle_hash: "h" } });
  await p.subscription.create({ data: { user_id: user.id, recipient_id: streamRecipient.id, desktop_notifications: null, push_notifications: true } });
  const message = await p.message.create({ data: { realm_id: realm.id, sender_id: user.id, recipient_id: streamRecipient.id, subject: "t", content: "c", rendered_content: "<p>c</p>" } });
  await p.userMessage.create({ data: { user_id: user.id, message_id: message.id, flags: 1 | 2 } });
  await p.reaction.create({ data: { message_id: message.id, user_id: user.id, emoji_name: "smile", emoji_code: "1f604" } });
  await p.messageEdit.create({ data: { message_id: message.id, user_id: user.id, prev_content: "b", prev_topic: "t0" } });
  await p.submessage.create({ data: { message_id: message.id, sender_id: user.id, msg_type: "widget", content: "{}" } });
  const attachment = await p.attachment.create({ data: { realm_id: realm.id, owner_id: user.id, file_name: "f.txt", path_id: "1/ab/f.txt", size: 3, content_type: "text/plain" } });
  await p.attachmentMessage.create({ data: { attachment_id: attachment.id, message_id: message.id } });
  await p.realmEmoji.create({ data: { realm_id: realm.id, name: "party", author_id: user.id, file_name: "party.png", content_type: "image/png" } });
  await p.realmFilter.create({ data: { realm_id: realm.id, pattern: "#(?P<id>[0-9]+)", url_format_string: "https://x.io/%(id)s" } });
  const group = await p.userGroup.create({ data: { realm_id: realm.id, name: "g" } });
  await p.userGroupMembership.create({ data: { user_group_id: group.id, user_id: user.id } });
  await p.userTopic.create({ data: { user_id: user.id, stream_id: stream.id, recipient_id: streamRecipient.id, topic_name: "t", visibility_policy: 3 } });
  await p.userPresence.create({ data: { realm_id: realm.id, user_id: user.id, client_name: "website", status: 1, timestamp: new Date() } });
  await p.userStatus.create({ data: { user_id: user.id, realm_id: realm.id, status: 1, status_text: "away" } });
  await p.alertWord.create({ data: { realm_id: realm.id, user_id: user.id, word: "deploy" } });
  const field = await p.customProfileField.create({ data: { realm_id: realm.id, name: "Phone", type: 1 } });
  await p.customProfileFieldValue.create({ data: { user_id: user.id, field_id: field.id, value: "555" } });
  await p.defaultStream.create({ data: { realm_id: realm.id, stream_id: stream.id } });
  const streamGroup = await p.defaultStreamGroup.create({ data: { realm_id: realm.id, name: "dg" } });
  await p.defaultStreamGroupStream.create({ data: { group_id: streamGroup.id, stream_id: stream.id } });
  await p.userHotspot.create({ data: { user_id: user.id, hotspot: "intro" } });
  await p.botStorageData.create({ data: { user_id: bot.id, key: "number", value: "0" } });
  await p.botConfigData.create({ data: { bot_profile_id: bot.id, key: "api_key", value: "secret" } });
  await p.userProfile.update({ where: { id: bot.id }, data: { default_sending_stream_id: stream.id, default_events_register_stream_id: stream.id, default_all_public_streams: true } });
  await p.eventOutbox.create({ data: { realm_id: realm.id, events: [{ event: { type: "x" }, users: [1] }] } });

  const read = await p.realm.findUniqueOrThrow({
    where: { id: realm.id },
    include: { users: { include: { services: true, status: true, profile_values: true } }, streams: true, messages: { include: { user_messages: true, reactions: true, edits: true, submessages: true, attachments: true } } },
  });
  expect(read.upload_quota_bytes).toBe(1n << 40n);
  expect(read.users).toHaveLength(2);
  expect(read.users.find((u) => u.is_bot)!.services[0].base_url).toBe("http://127.0.0.1/hook");
  expect(read.users.find((u) => !u.is_bot)!.status!.status_text).toBe("away");
  expect(read.messages[0]).toMatchObject({ rendered_content: "<p>c</p>", user_messages: [{ flags: 3 }], reactions: [{ emoji_code: "1f604" }], edits: [{ prev_topic: "t0" }] });
  expect((await p.attachment.findUniqueOrThrow({ where: { id: attachment.id } })).content_type).toBe("text/plain");
  await p.serverSecret.create({ data: { name: "k", value: "v" } });
  expect(await p.serverSecret.findUniqueOrThrow({ where: { name: "k" } })).toEqual({ name: "k", value: "v" });
  expect((await p.subscription.findFirstOrThrow({ where: { user_id: user.id } })).desktop_notifications).toBeNull();
  expect((await p.eventOutbox.findFirstOrThrow()).events).toEqual([{ event: { type: "x" }, users: [1] }]);
  expect(await p.botStorageData.findUniqueOrThrow({ where: { user_id_key: { user_id: bot.id, key: "number" } } })).toEqual({ user_id: bot.id, key: "number", value: "0" });
  expect(await p.botConfigData.findUniqueOrThrow({ where: { bot_profile_id_key: { bot_profile_id: bot.id, key: "api_key" } } })).toEqual({ bot_profile_id: bot.id, key: "api_key", value: "secret" });
  expect(await p.userProfile.findUniqueOrThrow({ where: { id: bot.id }, include: { default_sending_stream: true } })).toMatchObject({ default_sending_stream: { name: "s" }, default_all_public_streams: true });
  for (const model of [p.realmEmoji, p.realmFilter, p.userGroupMembership, p.userTopic, p.userPresence, p.alertWord, p.defaultStreamGroupStream, p.userHotspot, p.huddle] as Array<{ count(): Promise<number> }>) {
    expect(await model.count()).toBe(1);
  }
}

describe.each(["postgres", "pglite"] as const)("schema and migrations (%s)", (kind) => {
  let testDb: TestDatabase | null = null;
  let db: Database;

  beforeAll(async () => {
    if (kind === "postgres") testDb = await createTestDatabase();
    db = await openDatabase({ databaseUrl: testDb?.url ?? null, dataDir: "memory://", migrate: true });
  });
  afterAll(async () => {
    await db.close();
    await testDb?.drop();
  });

  test("every model's table and scalar field exists with its type and nullability, and nothing more", async () => {
    const declared = parseSchema();
    const actual = await columns(db);
    expect([...actual.keys()].sort()).toEqual([...declared.keys()].sort());
    for (const [table, fields] of declared) {
      const cols = actual.get(table)!;
      expect([...cols.keys()].sort()).toEqual(fields.map((f) => f.name).sort());
      for (const field of fields) {
        expect({ table, column: field.name, ...cols.get(field.name) }).toEqual({ table, column: field.name, type: field.type, nullable: field.optional });
      }
    }
  });

  test("every model can be written and read back through Prisma", async () => {
    await writeAndReadEveryModel(db);
  });

  test("migrations are recorded in _prisma_migrations and a second run applies nothing", async () => {
    const rows = await db.prisma.$queryRaw<{ migration_name: string; finished_at: Date | null; checksum: string }[]>`
      SELECT migration_name, finished_at, checksum FROM "_prisma_migrations" ORDER BY migration_name`;
    const expected = listMigrations();
    expect(rows.map((r) => r.migration_name)).toEqual(expected.map((m) => m.name));
    expect(rows.map((r) => r.checksum)).toEqual(expected.map((m) => m.checksum));
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
  });

  test("the hot-path indexes exist", async () => {
    const rows = await db.prisma.$queryRaw<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE schemaname = 'public'`;
    const names = rows.map((r) => r.indexname);
    for (const index of ["user_message_unread_idx", "message_recipient_id_upper_subject_id_idx", "subscription_recipient_id_active_idx", "user_profile_realm_id_lower_email_key"]) {
      expect(names).toContain(index);
    }
    // A stream or topic narrow's page is read from the index alone (migration 0008).
    const page = await db.prisma.$queryRaw<{ indexname: string; indexdef: string }[]>`
      SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN ('message_recipient_id_id_idx', 'message_recipient_id_upper_subject_id_idx') ORDER BY indexname`;
    expect(page.map((r) => r.indexdef.replace(/.* USING btree /, ""))).toEqual([
      "(recipient_id, id) INCLUDE (realm_id, cache_version)",
      "(recipient_id, upper(subject), id) INCLUDE (realm_id, cache_version, subject)",
    ]);
  });

  test("user_message has no foreign keys, but its rows go with their message and keep their user", async () => {
    const p = db.prisma;
    const keys = await p.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = 'user_message'::regclass AND contype = 'f'`;
    expect(keys[0].n).toBe(0);
    const realm = await p.realm.create({ data: { string_id: "keys", name: "Keys" } });
    const recipient = await p.recipient.create({ data: { type: 1, type_id: 1001 } });
    const user = await p.userProfile.create({ data: { realm_id: realm.id, email: "k@x.io", delivery_email: "k@x.io", full_name: "K", api_key: "q".repeat(32), recipient_id: recipient.id } });
    const other = await p.userProfile.create({ data: { realm_id: realm.id, email: "o@x.io", delivery_email: "o@x.io", full_name: "O", api_key: "o".repeat(32), recipient_id: recipient.id } });
    const message = (n: number) => p.message.create({ data: { realm_id: realm.id, sender_id: user.id, recipient_id: recipient.id, content: `m${n}` } });
    const [kept, gone, alsoGone] = await Promise.all([message(1), message(2), message(3)]);
    await p.userMessage.createMany({ data: [kept, gone, alsoGone].flatMap((m) => [{ user_id: user.id, message_id: m.id }, { user_id: other.id, message_id: m.id }]) });

    await p.message.deleteMany({ where: { id: { in: [gone.id, alsoGone.id] } } });
    expect((await p.userMessage.findMany({ where: { user_id: { in: [user.id, other.id] } }, orderBy: { user_id: "asc" } })).map((r) => r.message_id)).toEqual([kept.id, kept.id]);

    await expect(p.$executeRaw`DELETE FROM user_profile WHERE id = ${other.id}`).rejects.toThrow(/still has user_message rows/);
    await p.userMessage.deleteMany({ where: { user_id: other.id } });
    expect(await p.$executeRaw`DELETE FROM user_profile WHERE id = ${other.id}`).toBe(1);
  });

  test("a user's bot storage does not hold the user back, and goes with it (Zulip: on_delete=CASCADE)", async () => {
    const p = db.prisma;
    const realm = await p.realm.create({ data: { string_id: "storage", name: "Storage" } });
    const user = (n: number) =>
      p.userProfile.create({ data: { realm_id: realm.id, email: `s${n}@x.io`, delivery_email: `s${n}@x.io`, full_name: `S${n}`, api_key: `${n}`.repeat(32), is_bot: true, bot_type: 1 } });
    const [gone, kept] = [await user(1), await user(2)];
    await p.botStorageData.createMany({ data: [{ user_id: gone.id, key: "a", value: "1" }, { user_id: gone.id, key: "b", value: "2" }, { user_id: kept.id, key: "a", value: "3" }] });
    expect(await p.$executeRaw`DELETE FROM user_profile WHERE id = ${gone.id}`).toBe(1);
    expect(await p.botStorageData.findMany({ where: { user_id: { in: [gone.id, kept.id] } } })).toEqual([{ user_id: kept.id, key: "a", value: "3" }]);
  });

  test("a bot's configuration goes with it, and a bot's default stream setting goes with the stream (0014)", async () => {
    const p = db.prisma;
    const realm = await p.realm.create({ data: { string_id: "botconfig", name: "Bot config" } });
    const bot = await p.userProfile.create({ data: { realm_id: realm.id, email: "c@x.io", delivery_email: "c@x.io", full_name: "C", api_key: "c".repeat(32), is_bot: true, bot_type: 4 } });
    const stream = await p.stream.create({ data: { realm_id: realm.id, name: "gone", email_token: "g" } });
    await p.userProfile.update({ where: { id: bot.id }, data: { default_sending_stream_id: stream.id, default_events_register_stream_id: stream.id } });
    await p.botConfigData.createMany({ data: [{ bot_profile_id: bot.id, key: "a", value: "1" }, { bot_profile_id: bot.id, key: "b", value: "2" }] });
    await expect(p.botConfigData.create({ data: { bot_profile_id: bot.id, key: "a", value: "again" } })).rejects.toThrow();
    expect(await p.$executeRaw`DELETE FROM stream WHERE id = ${stream.id}`).toBe(1);
    expect(await p.userProfile.findUniqueOrThrow({ where: { id: bot.id } })).toMatchObject({ default_sending_stream_id: null, default_events_register_stream_id: null });
    expect(await p.$executeRaw`DELETE FROM user_profile WHERE id = ${bot.id}`).toBe(1);
    expect(await p.botConfigData.count({ where: { bot_profile_id: bot.id } })).toBe(0);
  });
});

describe("the migration runner", () => {
  test("refuses a migration that changed after it was applied, and rolls back a failing one", async () => {
    const { PGlite } = await import("@electric-sql/pglite");
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import("node:fs");
    const os = await import("node:os");
    const dir = mkdtempSync(path.join(os.tmpdir(), "migrations-"));
    const pg = await PGlite.create();
    try {
      mkdirSync(path.join(dir, "0001_a"));
      writeFileSync(path.join(dir, "0001_a", "migration.sql"), "CREATE TABLE a (id int);");
      expect(await applyMigrations(pgliteExecutor(pg), dir)).toEqual(["0001_a"]);
      expect(await applyMigrations(pgliteExecutor(pg), dir)).toEqual([]);

      mkdirSync(path.join(dir, "0002_bad"));
      writeFileSync(path.join(dir, "0002_bad", "migration.sql"), "CREATE TABLE b (id int); SELECT * FROM no_such_table;");
      await expect(applyMigrations(pgliteExecutor(pg), dir)).rejects.toThrow(MigrationError);
      const tables = await pg.query<{ n: number }>("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'b'");
      expect(tables.rows[0].n).toBe(0);
      rmSync(path.join(dir, "0002_bad"), { recursive: true });

      writeFileSync(path.join(dir, "0001_a", "migration.sql"), "CREATE TABLE a (id bigint);");
      await expect(applyMigrations(pgliteExecutor(pg), dir)).rejects.toThrow("0001_a was changed after it was applied");
    } finally {
      await pg.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

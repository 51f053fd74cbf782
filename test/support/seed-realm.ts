// Seeds an organization in bulk with set-based SQL, in either mode: N users (who can sign in with
// one password, hashed once), M streams with subscriptions, and K messages with their
// user_message rows. Creating 1,000 users through the API would spend minutes hashing passwords;
// these are the rows the actions write, and the triggers that keep the servers' caches coherent
// (realm generations, message cache versions) fire on them as on the actions' own writes.
import { Client } from "pg";
import { hashPassword } from "../../packages/core/src/lib/secrets.ts";
import type { TestServer } from "./server.ts";

/** What seeding needs of a database: pg's Client, a Postgres URL's pool, or a server's Prisma client. */
export interface SeedSql {
  query<T>(text: string, params?: unknown[]): Promise<T[]>;
}

/** The database of a server running in this process (either mode), through its Prisma client. */
export function serverSql(server: TestServer): SeedSql {
  const prisma = server.running.services.db.prisma;
  return { query: <T>(text: string, params: unknown[] = []) => prisma.$queryRawUnsafe<T[]>(text, ...params) };
}

/** A Postgres database by URL (a server in another process); `close` when done. */
export async function postgresSql(databaseUrl: string): Promise<SeedSql & { close(): Promise<void> }> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    query: async <T>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as T[],
    close: () => client.end(),
  };
}

export interface SeededUser {
  id: number;
  email: string;
  apiKey: string;
  recipientId: number;
  fullName: string;
}

export interface SeededStream {
  id: number;
  name: string;
  recipientId: number;
}

export interface SeedRealmOptions {
  users: number;
  /** Streams besides `general` (which every seeded user is subscribed to). */
  streams: number;
  /** Subscribers of each other stream: a deterministic pseudo-random count in this range. */
  subscribersPerStream?: [number, number];
  /** Every seeded user's password (hashed once, the same hash for all); none when omitted. */
  password?: string;
  /** Emails are `<emailPrefix><n>@<emailDomain>`. */
  emailPrefix?: string;
  emailDomain?: string;
  /** The first seeded user is subscribed to every stream (the person a test or benchmark signs in as). */
  firstUserEverywhere?: boolean;
  /** Messages spread over the streams (general included), with user_message rows for each subscriber. */
  messages?: number;
  /** Of those, the newest this many are unread for everyone who has them; the rest are read. */
  unreadMessages?: number;
  /** Topics per stream the messages cycle through. */
  topicsPerStream?: number;
  /** The realm; the default realm (string_id '') when omitted. */
  realmId?: number;
}

export interface SeededRealm {
  realmId: number;
  users: SeededUser[];
  /** `general` first, then the seeded streams. */
  streams: SeededStream[];
}

/** Deterministic pseudo-random numbers, so every run seeds the same realm. */
function rng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

export async function defaultRealmId(db: SeedSql): Promise<number> {
  const rows = await db.query<{ id: number }>(`SELECT id FROM realm WHERE string_id = ''`);
  if (rows.length === 0) throw new Error("no default realm (string_id '') to seed");
  return rows[0].id;
}

export async function seedRealm(db: SeedSql, options: SeedRealmOptions): Promise<SeededRealm> {
  const realmId = options.realmId ?? (await defaultRealmId(db));
  const prefix = options.emailPrefix ?? "user";
  const domain = options.emailDomain ?? "seed.example";
  const passwordHash = options.password === undefined ? null : await hashPassword(options.password);
  // md5() of random text: 32 hex characters, like the 32 alphanumerics generateApiKey makes.
  const users = (
    await db.query<{ id: number; email: string; api_key: string; full_name: string }>(
      `INSERT INTO user_profile (realm_id, email, delivery_email, full_name, short_name, api_key, password_hash)
       SELECT $1::int, $2::text || n || '@' || $3::text, $2::text || n || '@' || $3::text, 'Seeded User ' || n, $2::text || n, md5(random()::text || clock_timestamp()::text || n), $4::text
       FROM generate_series(1, $5::int) AS n ORDER BY n RETURNING id, email, api_key, full_name`,
      [realmId, prefix, domain, passwordHash, options.users],
    )
  ).sort((a, b) => a.id - b.id);
  const userIds = users.map((u) => u.id);
  await db.query(`INSERT INTO recipient (type, type_id) SELECT 1, id FROM unnest($1::int[]) AS id`, [userIds]);
  const recipients = await db.query<{ id: number; type_id: number }>(
    `UPDATE user_profile u SET recipient_id = r.id FROM recipient r WHERE r.type = 1 AND r.type_id = u.id AND u.id = ANY($1::int[]) RETURNING r.id, r.type_id`,
    [userIds],
  );
  const recipientOf = new Map(recipients.map((r) => [r.type_id, r.id]));

  const general = (await db.query<{ id: number; name: string; recipient_id: number }>(
    `SELECT id, name, recipient_id FROM stream WHERE realm_id = $1 AND name = 'general'`,
    [realmId],
  ))[0];
  if (!general) throw new Error("the realm has no general stream");
  await db.query(
    `INSERT INTO subscription (user_id, recipient_id, color) SELECT id, $2::int, '#76ce90' FROM unnest($1::int[]) AS id ON CONFLICT DO NOTHING`,
    [userIds, general.recipient_id],
  );

  // Streams in one statement, then their recipients, then the link back.
  const names = Array.from({ length: options.streams }, (_, i) => `stream ${i + 1}`);
  const created = await db.query<{ id: number; name: string }>(
    `INSERT INTO stream (realm_id, name, description, rendered_description, email_token)
     SELECT $1::int, name, 'About ' || name, '<p>About ' || name || '</p>', md5(random()::text || name)
     FROM unnest($2::text[]) WITH ORDINALITY AS t(name, i) ORDER BY i RETURNING id, name`,
    [realmId, names],
  );
  await db.query(`INSERT INTO recipient (type, type_id) SELECT 2, id FROM unnest($1::int[]) AS id`, [created.map((s) => s.id)]);
  const linked = await db.query<{ id: number; name: string; recipient_id: number }>(
    `UPDATE stream s SET recipient_id = r.id FROM recipient r WHERE r.type = 2 AND r.type_id = s.id AND s.id = ANY($1::int[]) RETURNING s.id, s.name, s.recipient_id`,
    [created.map((s) => s.id)],
  );
  // Zulip 10.0's channel settings, as createStream gives a stream made with the organization.
  await db.query(
    `UPDATE stream s SET
       can_send_message_group_id = (SELECT id FROM user_group WHERE realm_id = s.realm_id AND is_system_group AND name = 'role:everyone'),
       can_remove_subscribers_group_id = (SELECT id FROM user_group WHERE realm_id = s.realm_id AND is_system_group AND name = 'role:administrators'),
       can_administer_channel_group_id = (SELECT id FROM user_group WHERE realm_id = s.realm_id AND is_system_group AND name = 'role:nobody'),
       can_add_subscribers_group_id = (SELECT id FROM user_group WHERE realm_id = s.realm_id AND is_system_group AND name = 'role:nobody'),
       can_subscribe_group_id = (SELECT id FROM user_group WHERE realm_id = s.realm_id AND is_system_group AND name = 'role:nobody')
     WHERE s.id = ANY($1::int[])`,
    [created.map((s) => s.id)],
  );
  const streams: SeededStream[] = [
    { id: general.id, name: general.name, recipientId: general.recipient_id },
    ...linked.sort((a, b) => a.id - b.id).map((s) => ({ id: s.id, name: s.name, recipientId: s.recipient_id })),
  ];

  const [low, high] = options.subscribersPerStream ?? [10, 50];
  const random = rng(42);
  const subUsers: number[] = [];
  const subRecipients: number[] = [];
  for (const stream of streams.slice(1)) {
    const count = Math.min(users.length, low + Math.floor(random() * (high - low + 1)));
    const members = new Set<number>();
    if (options.firstUserEverywhere && users.length > 0) members.add(users[0].id);
    while (members.size < count) members.add(userIds[Math.floor(random() * userIds.length)]);
    for (const member of members) {
      subUsers.push(member);
      subRecipients.push(stream.recipientId);
    }
  }
  if (subUsers.length > 0) {
    await db.query(
      `INSERT INTO subscription (user_id, recipient_id, color) SELECT u, r, '#a6c7e5' FROM unnest($1::int[], $2::int[]) AS t(u, r) ON CONFLICT DO NOTHING`,
      [subUsers, subRecipients],
    );
  }

  if (options.messages && options.messages > 0) {
    await seedStreamMessages(db, {
      realmId,
      recipientIds: streams.map((s) => s.recipientId),
      senderIds: userIds,
      count: options.messages,
      unread: options.unreadMessages ?? 0,
      topics: options.topicsPerStream ?? 5,
      userMessages: "subscribers",
    });
  }
  await db.query("ANALYZE");
  return {
    realmId,
    users: users.map((u) => ({ id: u.id, email: u.email, apiKey: u.api_key, recipientId: recipientOf.get(u.id)!, fullName: u.full_name })),
    streams,
  };
}

export interface SeedMessagesOptions {
  realmId: number;
  /** Stream recipients the messages cycle through (one for a single stream). */
  recipientIds: number[];
  /** Senders the messages cycle through. */
  senderIds: number[];
  count: number;
  /** The newest this many are unread; the rest read. */
  unread?: number;
  /** Topics per stream: `topic 0` ... */
  topics?: number;
  /**
   * Who gets user_message rows: each stream's active subscribers (as a send writes them), only
   * these users (e.g. the one person a benchmark reads as), or nobody (history public to
   * subscribers still shows them in the stream's narrow).
   */
  userMessages: "subscribers" | "none" | { userIds: number[] };
  /** Content of message n (1-based); a short numbered sentence by default. Plain text, escaped here. */
  content?: (n: number) => string;
}

/**
 * Messages in one statement, oldest first (ids ascending with date_sent), each rendered as its
 * plain text in a paragraph; then their user_message rows. Returns the ids, ascending.
 */
export async function seedStreamMessages(db: SeedSql, options: SeedMessagesOptions): Promise<number[]> {
  const topics = options.topics ?? 5;
  const contents = options.content ? Array.from({ length: options.count }, (_, i) => options.content!(i + 1)) : null;
  const inserted = await db.query<{ id: number }>(
    `INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version, date_sent)
     SELECT $1::int,
            ($2::int[])[1 + (n * 7) % array_length($2::int[], 1)],
            ($3::int[])[1 + n % array_length($3::int[], 1)],
            'topic ' || ((n / array_length($3::int[], 1)) % $4::int),
            c,
            '<p>' || replace(replace(replace(c, '&', '&amp;'), '<', '&lt;'), '>', '&gt;') || '</p>',
            1,
            now() - make_interval(secs => ($5::int - n) * 30)
     FROM (SELECT n, COALESCE(($6::text[])[n], 'Message number ' || n || ' of the seeded history, about as long as most.') AS c
           FROM generate_series(1, $5::int) AS n) AS t
     ORDER BY n RETURNING id`,
    [options.realmId, options.senderIds, options.recipientIds, topics, options.count, contents],
  );
  const ids = inserted.map((r) => r.id).sort((a, b) => a - b);
  if (ids.length === 0) return ids;
  const [first, last] = [ids[0], ids[ids.length - 1]];
  const readBelow = ids[Math.max(0, ids.length - (options.unread ?? 0))] ?? last + 1;
  const readBound = (options.unread ?? 0) > 0 ? readBelow : last + 1;
  // flags: read (1) below the unread ones; nothing else.
  if (options.userMessages === "subscribers") {
    await db.query(
      `INSERT INTO user_message (user_id, message_id, flags)
       SELECT s.user_id, m.id, CASE WHEN m.id < $3::int THEN 1 ELSE 0 END
       FROM message m JOIN subscription s ON s.recipient_id = m.recipient_id AND s.active AND s.is_user_active
       WHERE m.id BETWEEN $1::int AND $2::int AND m.realm_id = $4::int`,
      [first, last, readBound, options.realmId],
    );
  } else if (options.userMessages !== "none") {
    await db.query(
      `INSERT INTO user_message (user_id, message_id, flags)
       SELECT u, m.id, CASE WHEN m.id < $3::int THEN 1 ELSE 0 END
       FROM message m CROSS JOIN unnest($5::int[]) AS u
       WHERE m.id BETWEEN $1::int AND $2::int AND m.realm_id = $4::int`,
      [first, last, readBound, options.realmId, options.userMessages.userIds],
    );
  }
  // Each stream's first message, as the send path records it.
  await db.query(
    `UPDATE stream s SET first_message_id = f.min_id
     FROM (SELECT recipient_id, min(id) AS min_id FROM message WHERE id BETWEEN $1::int AND $2::int GROUP BY recipient_id) f
     WHERE s.recipient_id = f.recipient_id AND (s.first_message_id IS NULL OR s.first_message_id > f.min_id)`,
    [first, last],
  );
  return ids;
}

/** Subscribes users to a stream (no events: for seeding before anyone has a queue). */
export async function seedSubscriptions(db: SeedSql, userIds: number[], recipientId: number): Promise<void> {
  await db.query(
    `INSERT INTO subscription (user_id, recipient_id, color) SELECT id, $2::int, '#e79ab5' FROM unnest($1::int[]) AS id ON CONFLICT DO NOTHING`,
    [userIds, recipientId],
  );
}

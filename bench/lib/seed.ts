// Seeds a realm in bulk with plain SQL (creating 1,000 users through the API would spend minutes
// hashing passwords). Rows are the ones the actions would write.
import { randomBytes } from "node:crypto";
import { Client } from "pg";

export interface SeededUser {
  id: number;
  email: string;
  apiKey: string;
}

export interface SeedOptions {
  users: number;
  streams: number;
  /** Subscribers of each stream but `general` (which has everyone): a random count in this range. */
  subscribersPerStream: [number, number];
}

/** Deterministic pseudo-random numbers, so every run measures the same realm. */
function rng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

/** What seeding needs of a database client: pg's Client and PGlite both answer so. */
export interface SeedSql {
  query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
}

export async function seedRealm(databaseUrl: string, options: SeedOptions): Promise<{ realmId: number; users: SeededUser[] }> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return await seedRealmWith(db as unknown as SeedSql, options);
  } finally {
    await db.end();
  }
}

/** The same, on a client of the caller's (the embedded database, opened while no server runs). */
export async function seedRealmWith(db: SeedSql, options: SeedOptions): Promise<{ realmId: number; users: SeededUser[] }> {
  const realmId = (await db.query<{ id: number }>(`SELECT id FROM realm WHERE string_id = ''`)).rows[0].id;
  const users: SeededUser[] = [];
  await db.query("BEGIN");
  const inserted = await db.query<{ id: number; email: string; api_key: string }>(
    `INSERT INTO user_profile (realm_id, email, delivery_email, full_name, short_name, api_key)
     SELECT $1, 'user' || n || '@bench.example', 'user' || n || '@bench.example', 'Bench User ' || n, 'user' || n, md5(random()::text || n)
     FROM generate_series(1, $2) AS n RETURNING id, email, api_key`,
    [realmId, options.users],
  );
  for (const row of inserted.rows) users.push({ id: row.id, email: row.email, apiKey: row.api_key });
  await db.query(`INSERT INTO recipient (type, type_id) SELECT 1, id FROM user_profile WHERE realm_id = $1 AND recipient_id IS NULL`, [realmId]);
  await db.query(`UPDATE user_profile u SET recipient_id = r.id FROM recipient r WHERE r.type = 1 AND r.type_id = u.id AND u.recipient_id IS NULL`);

  const general = (await db.query<{ recipient_id: number }>(`SELECT recipient_id FROM stream WHERE realm_id = $1 AND name = 'general'`, [realmId])).rows[0];
  await db.query(`INSERT INTO subscription (user_id, recipient_id, color) SELECT id, $2, '#76ce90' FROM unnest($1::int[]) AS id`, [users.map((u) => u.id), general.recipient_id]);

  const random = rng(42);
  for (let s = 1; s < options.streams; s++) {
    const stream = await db.query<{ id: number }>(
      `INSERT INTO stream (realm_id, name, description, rendered_description, email_token) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [realmId, `stream ${s}`, `Stream number ${s}`, `<p>Stream number ${s}</p>`, randomBytes(16).toString("hex")],
    );
    const recipient = await db.query<{ id: number }>(`INSERT INTO recipient (type, type_id) VALUES (2, $1) RETURNING id`, [stream.rows[0].id]);
    await db.query(`UPDATE stream SET recipient_id = $1 WHERE id = $2`, [recipient.rows[0].id, stream.rows[0].id]);
    const [low, high] = options.subscribersPerStream;
    const count = low + Math.floor(random() * (high - low + 1));
    const members = new Set<number>();
    while (members.size < count) members.add(users[Math.floor(random() * users.length)].id);
    await db.query(`INSERT INTO subscription (user_id, recipient_id, color) SELECT id, $2, '#a6c7e5' FROM unnest($1::int[]) AS id`, [[...members], recipient.rows[0].id]);
  }
  await db.query("COMMIT");
  await db.query("ANALYZE");
  return { realmId, users };
}

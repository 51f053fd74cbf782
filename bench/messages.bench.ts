// Issue 4's messaging figures on a realm of 1,000,000 messages across 100 streams and 1,000
// users, each beside its ceiling measured in the same run:
// - GET /messages, newest 100 of a stream or topic narrow, 8 concurrent clients: p99 (target < 20 ms);
//   ceilings: the same query in plain SQL, 8 concurrent connections; bare Node HTTP serving a body
//   of the same size to the same client.
// - POST /messages to a stream with 10 subscribers, 32 concurrent senders: messages/s (target >= 1000);
//   ceilings: one plain SQL statement inserting the message and its rows; bare Node HTTP.
// - POST /messages to a stream with 1,000 subscribers: messages/s (target >= 60% of its ceiling).
// Everything shares one 2-core machine: server, Postgres, Redis and this load generator.
import { Pool } from "pg";
import { runConcurrent } from "./lib/concurrency.ts";
import { startBareServer } from "./lib/bare-server.ts";
import { basicAuth, settlePostgres, startBenchEnvironment } from "./lib/environment.ts";
import { request, type HttpResponse } from "./lib/http-client.ts";
import { seedRealm } from "./lib/seed.ts";
import { percentile, report } from "./lib/stats.ts";

// The realm size; BENCH_MESSAGES makes a smaller one for quick iterations while profiling.
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
/**
 * Unmeasured calls before each measured run, as many as measured (the ceilings' runs as well as
 * the server's): a server is measured in its steady state. Measured here, V8 needs a few thousand
 * requests of a kind to finish optimizing them; the first 3,000 sends run about 30% slower.
 */
const warmupLike = (total: number) => ({ warmup: total });
/** Enough for a stable p99: the 32 slowest fetches decide it, not one burst of 8. */
const FETCHES = 3200;
/**
 * Fetches run twice their number unmeasured first (their ceilings too): measured here in runs of
 * 3,200, the server's rate rose over the first 6,000 fetches (1,290, 1,840, 2,200/s) and was flat
 * after, as V8 went on optimizing (100 optimizations in the second run, 6 in the fifth).
 */
const FETCH_WARMUP = { warmup: 2 * FETCHES };
/**
 * Every page's status and start are checked, every 16th page is parsed in full: parsing 58 KiB of
 * JSON costs this load generator about 0.2 ms, CPU the server and Postgres then lack on these two
 * cores (measured: the generator's process was 80% busy, half of it in JSON.parse).
 */
const PARSE_EVERY = 16;

function checkPage(res: HttpResponse, i: number, messages: number | null): void {
  if (res.status !== 200 || !res.body.startsWith('{"result":"success"')) throw new Error(`/messages: ${res.status} ${res.body.slice(0, 200)}`);
  if (i % PARSE_EVERY !== 0) return;
  const body = JSON.parse(res.body) as { messages?: unknown[] };
  if (messages !== null && body.messages?.length !== messages) throw new Error(`/messages: ${body.messages?.length} messages, expected ${messages}`);
}

async function seedMessages(pool: Pool, realmId: number, userIds: number[], recipients: number[]): Promise<void> {
  // Plain SQL in one statement; message rows as the send path writes them.
  await pool.query(
    `INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version, date_sent)
     SELECT $1, ($2::int[])[1 + n % array_length($2::int[], 1)], ($3::int[])[1 + n % array_length($3::int[], 1)],
            'topic ' || ((n / 100) % 20), 'message number ' || n, '<p>message number ' || n || '</p>', 1, now() - make_interval(secs => $4 - n)
     FROM generate_series(1, $4) AS n`,
    [realmId, userIds, recipients, MESSAGES],
  );
}

/** The same client against a bare Node HTTP server answering `body`: the HTTP ceiling. */
async function bareRun(body: string, total: number, concurrency: number, method: "GET" | "POST", warmup = warmupLike(total)) {
  const bare = await startBareServer(body);
  try {
    const form = new URLSearchParams({ type: "stream", to: "stream 1", topic: "bench", content: "benchmark message" }).toString();
    return await runConcurrent(total, concurrency, async (i) => {
      const res = await request(`${bare.url}/api/v1/messages`, {
        method,
        headers: { Authorization: "Basic YmVuY2g6YmVuY2g=", ...(method === "POST" ? { "Content-Type": "application/x-www-form-urlencoded" } : {}) },
        ...(method === "POST" ? { body: form } : {}),
      });
      checkPage(res, i, null);
    }, warmup);
  } finally {
    await bare.close();
  }
}

export async function benchMessages(): Promise<boolean> {
  const env = await startBenchEnvironment();
  const pool = new Pool({ connectionString: env.databaseUrl, max: 32 });
  try {
    const { realmId, users } = await seedRealm(env.databaseUrl, { users: 1000, streams: 100, subscribersPerStream: [10, 10] });
    const streams = (await pool.query<{ id: number; name: string; recipient_id: number }>(`SELECT id, name, recipient_id FROM stream WHERE realm_id = $1 ORDER BY id`, [realmId])).rows;
    const seedStart = performance.now();
    await seedMessages(pool, realmId, users.map((u) => u.id), streams.map((s) => s.recipient_id));
    // A realm in steady state: vacuumed (visibility map and hint bits set), so autovacuum does not
    // run in the middle of the measurements and compete with them for the two cores, and
    // checkpointed, so the seed's dirty pages are not written out during the first measurement.
    await settlePostgres(env.databaseUrl);
    process.stdout.write(`seeded ${MESSAGES} messages in ${((performance.now() - seedStart) / 1000).toFixed(0)} s\n`);

    // Readers: subscribers of a 10-subscriber stream (public: they read its whole history).
    const ten = streams.find((s) => s.name === "stream 1")!;
    const readers = (await pool.query<{ user_id: number }>(`SELECT user_id FROM subscription WHERE recipient_id = $1 ORDER BY user_id`, [ten.recipient_id])).rows.map((r) => r.user_id);
    const byId = new Map(users.map((u) => [u.id, u]));
    const narrowFor = (i: number) => (i % 2 === 0 ? [["stream", ten.name]] : [["stream", ten.name], ["topic", `topic ${i % 20}`]]);

    let responseBytes = 0;
    const fetchRun = await runConcurrent(FETCHES, 8, async (i) => {
      const user = byId.get(readers[i % readers.length])!;
      const url = `${env.baseUrl}/api/v1/messages?anchor=newest&num_before=100&num_after=0&narrow=${encodeURIComponent(JSON.stringify(narrowFor(i)))}`;
      const res = await request(url, { headers: { Authorization: basicAuth(user.email, user.apiKey) } });
      checkPage(res, i, 100);
      responseBytes = res.body.length;
    }, FETCH_WARMUP);
    const sqlFetch = await runConcurrent(FETCHES, 8, async (i) => {
      const topic = i % 2 === 0 ? null : `topic ${i % 20}`;
      await pool.query(
        `SELECT m.*, um.flags, s.full_name, s.email FROM message m
         LEFT JOIN user_message um ON um.message_id = m.id AND um.user_id = $2
         JOIN user_profile s ON s.id = m.sender_id
         WHERE m.recipient_id = $1 AND ($3::text IS NULL OR upper(m.subject) = upper($3::text))
         ORDER BY m.id DESC LIMIT 100`,
        [ten.recipient_id, readers[i % readers.length], topic],
      );
    }, FETCH_WARMUP);
    const bareFetch = await bareRun(JSON.stringify({ result: "success", pad: "x".repeat(Math.max(0, responseBytes - 40)) }), FETCHES, 8, "GET", FETCH_WARMUP);
    const fetchOk = report({
      name: "GET /messages newest 100, stream/topic narrow, 8 concurrent, p99",
      value: percentile(fetchRun.samples, 99),
      unit: "ms",
      ceilings: [
        { name: "plain SQL, same query, 8 concurrent", value: percentile(sqlFetch.samples, 99) },
        { name: `bare Node HTTP, same body size (${Math.round(responseBytes / 1024)} KiB), 8 concurrent`, value: percentile(bareFetch.samples, 99) },
      ],
      target: { limit: 20 },
    });
    process.stdout.write(
      `  (p50 ${percentile(fetchRun.samples, 50).toFixed(2)} ms; plain SQL p50 ${percentile(sqlFetch.samples, 50).toFixed(2)} ms; bare HTTP p50 ${percentile(bareFetch.samples, 50).toFixed(2)} ms)\n`,
    );

    // Senders to a 10-subscriber stream, and to `general` (1,000 subscribers).
    const sendTo = async (stream: string, senders: number[], total: number, concurrency: number) =>
      runConcurrent(total, concurrency, async (i) => {
        const user = byId.get(senders[i % senders.length])!;
        const res = await request(`${env.baseUrl}/api/v1/messages`, {
          method: "POST",
          headers: { Authorization: basicAuth(user.email, user.apiKey), "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ type: "stream", to: stream, topic: "bench", content: `benchmark message ${i}` }).toString(),
        });
        if (res.status !== 200) throw new Error(`POST /messages: ${res.status} ${res.body}`);
      }, warmupLike(total));
    const sqlInsert = async (recipientId: number, senders: number[], total: number, concurrency: number) =>
      runConcurrent(total, concurrency, async (i) => {
        const sender = senders[i % senders.length];
        await pool.query(
          `WITH m AS (INSERT INTO message (realm_id, sender_id, recipient_id, subject, content, rendered_content, rendered_content_version)
                      VALUES ($1, $2, $3, 'bench', $4, $5, 1) RETURNING id)
           INSERT INTO user_message (user_id, message_id, flags)
           SELECT s.user_id, m.id, CASE WHEN s.user_id = $2 THEN 1 ELSE 0 END FROM subscription s CROSS JOIN m
           WHERE s.recipient_id = $3 AND s.active AND s.is_user_active`,
          [realmId, sender, recipientId, `benchmark message ${i}`, `<p>benchmark message ${i}</p>`],
        );
      }, warmupLike(total));

    const small = await sendTo(ten.name, readers, 3000, 32);
    const smallSql = await sqlInsert(ten.recipient_id, readers, 3000, 32);
    const rate = (run: { samples: number[]; wallMs: number }) => run.samples.length / (run.wallMs / 1000);
    const bareSend = await bareRun(JSON.stringify({ result: "success", msg: "", id: 1234567 }), 3000, 32, "POST");
    const smallOk = report({
      name: "POST /messages, 10 subscribers, 32 concurrent senders",
      value: rate(small),
      unit: "messages/s",
      ceilings: [
        { name: "plain SQL insert of message and rows, 32 concurrent", value: rate(smallSql) },
        { name: "bare Node HTTP, 32 concurrent", value: rate(bareSend) },
      ],
      target: { limit: 1000, higherIsBetter: true },
    });

    const general = streams.find((s) => s.name === "general")!;
    const everyone = users.map((u) => u.id);
    const big = await sendTo("general", everyone, 400, 8);
    const bigSql = await sqlInsert(general.recipient_id, everyone, 400, 8);
    const bigOk = report({
      name: "POST /messages, 1,000 subscribers, 8 concurrent senders",
      value: rate(big),
      unit: "messages/s",
      ceilings: [{ name: "plain SQL insert of message and 1,000 rows, 8 concurrent", value: rate(bigSql) }],
      target: { limit: Math.round(0.6 * rate(bigSql)), higherIsBetter: true },
    });
    return fetchOk && smallOk && bigOk;
  } finally {
    await pool.end();
    await env.close();
  }
}

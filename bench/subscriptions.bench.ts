// GET /users/me/subscriptions?include_subscribers=true in a realm of 1,000 users and 100 streams
// (issue 3's target: under 50 ms p50). Ceilings measured in the same run: the same two queries in
// plain SQL, and bare Node HTTP serving a body of the same size.
import http from "node:http";
import { Client } from "pg";
import { basicAuth, startBenchEnvironment } from "./lib/environment.ts";
import { seedRealm } from "./lib/seed.ts";
import { percentile, report, timeSequential } from "./lib/stats.ts";

const REQUESTS = 400;
const WARMUP = 50;

export async function benchSubscriptions(): Promise<boolean> {
  const env = await startBenchEnvironment();
  try {
    const { users } = await seedRealm(env.databaseUrl, { users: 1000, streams: 100, subscribersPerStream: [30, 300] });
    const pick = (i: number) => users[(i * 7919) % users.length];

    let bodyBytes = 0;
    let streamsPerUser = 0;
    const api = await timeSequential(REQUESTS, WARMUP, async (i) => {
      const user = pick(i);
      const res = await fetch(`${env.baseUrl}/api/v1/users/me/subscriptions?include_subscribers=true`, { headers: { Authorization: basicAuth(user.email, user.apiKey) } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text}`);
      bodyBytes += text.length;
      streamsPerUser += (JSON.parse(text) as { subscriptions: unknown[] }).subscriptions.length;
    });
    const measured = REQUESTS + WARMUP;
    process.stdout.write(`realm: 1000 users, 100 streams; average response ${Math.round(bodyBytes / measured / 1024)} KiB, ${(streamsPerUser / measured).toFixed(1)} streams per user\n`);

    // Ceiling 1: what Postgres needs for the same data (auth lookup, subscriptions, subscriber emails).
    const db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
    const sql = await timeSequential(REQUESTS, WARMUP, async (i) => {
      const user = pick(i);
      await db.query(`SELECT * FROM user_profile u JOIN realm r ON r.id = u.realm_id WHERE u.api_key = $1`, [user.apiKey]);
      const subs = await db.query(
        `SELECT s.*, st.* FROM subscription s JOIN stream st ON st.recipient_id = s.recipient_id WHERE s.user_id = $1 AND s.active AND NOT st.deactivated`,
        [user.id],
      );
      await db.query(
        `SELECT s.recipient_id, array_agg(u.email ORDER BY u.id) FROM subscription s JOIN user_profile u ON u.id = s.user_id
         WHERE s.recipient_id = ANY($1::int[]) AND s.active AND s.is_user_active GROUP BY s.recipient_id`,
        [subs.rows.map((r: { recipient_id: number }) => r.recipient_id)],
      );
    });
    await db.end();

    // Ceiling 2: bare Node HTTP answering with a body of the same average size.
    const body = JSON.stringify({ result: "success", msg: "", padding: "x".repeat(Math.round(bodyBytes / measured)) });
    const bare = http.createServer((_req, res) => {
      res.setHeader("Content-Type", "application/json");
      res.end(body);
    });
    await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
    const port = (bare.address() as { port: number }).port;
    const node = await timeSequential(REQUESTS, WARMUP, async () => {
      const res = await fetch(`http://127.0.0.1:${port}/`);
      await res.text();
    });
    await new Promise<void>((resolve) => bare.close(() => resolve()));

    const ok = report({
      name: "GET /users/me/subscriptions?include_subscribers=true p50",
      value: percentile(api, 50),
      unit: "ms",
      ceilings: [
        { name: "plain SQL, same queries", value: percentile(sql, 50) },
        { name: "bare Node HTTP, same body size", value: percentile(node, 50) },
      ],
      target: { limit: 50 },
    });
    report({
      name: "GET /users/me/subscriptions?include_subscribers=true p99",
      value: percentile(api, 99),
      unit: "ms",
      ceilings: [
        { name: "plain SQL, same queries", value: percentile(sql, 99) },
        { name: "bare Node HTTP, same body size", value: percentile(node, 99) },
      ],
    });
    return ok;
  } finally {
    await env.close();
  }
}

// Migration 0019 on a fresh database: every UPDATE and DELETE of a user or realm row notifies
// channel actor_rows after commit (`u<id>`, `r<id>`; a TRUNCATE `*`), and the events tier's
// listener (db/src/notification-listener.ts) hears them, and again after its connection is killed.
import { Client } from "pg";
import { openDatabase, type Database, type NotificationHandlers, type NotificationListener } from "@chat/db";
import { createTestDatabase, type TestDatabase } from "../support/services.ts";

/** The channel the migration's triggers notify. */
const ACTOR_ROWS_CHANNEL = "actor_rows";
const LISTENER_NAME = "actor-row-notifications-test";
const WAIT_MS = 10_000;

/** Records what a listener says, and lets a test wait for the next of it. */
class Recorder implements NotificationHandlers {
  readonly said: string[] = [];
  private waiting: { what: string; resolve: () => void } | undefined;

  listening(): void {
    this.record("listening");
  }
  lost(): void {
    this.record("lost");
  }
  notified(payload: string): void {
    this.record(payload);
  }

  private record(what: string): void {
    this.said.push(what);
    if (this.waiting?.what === what) this.waiting.resolve();
  }

  /** Resolves when the listener next says `what` (a payload, "listening" or "lost"). */
  next(what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the listener did not say ${what} within ${WAIT_MS} ms; it said ${this.said.join(", ")}`)), WAIT_MS);
      this.waiting = {
        what,
        resolve: () => {
          clearTimeout(timer);
          this.waiting = undefined;
          resolve();
        },
      };
    });
  }
}

describe("actor row notifications (migration 0019, Postgres)", () => {
  let database: TestDatabase;
  let db: Database;
  let recorder: Recorder;
  let listener: NotificationListener;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openDatabase({ databaseUrl: database.url, dataDir: "memory://", migrate: true });
    recorder = new Recorder();
    const listening = recorder.next("listening");
    listener = db.listen!(ACTOR_ROWS_CHANNEL, LISTENER_NAME, recorder);
    await listening;
  });
  afterAll(async () => {
    await listener.close();
    await db.close();
    await database.drop();
  });

  test("the migration applies on a fresh database and creates its triggers", async () => {
    const applied = await db.prisma.$queryRaw<{ migration_name: string }[]>`SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL`;
    expect(applied.map((row) => row.migration_name)).toContain("0019_actor_row_notifications");
    const triggers = await db.prisma.$queryRaw<{ tgname: string }[]>`SELECT tgname FROM pg_trigger WHERE tgname LIKE '%notify_actor_row%' ORDER BY tgname`;
    expect(triggers.map((row) => row.tgname)).toEqual([
      "realm_notify_actor_row",
      "realm_notify_actor_rows_truncated",
      "user_profile_notify_actor_row",
      "user_profile_notify_actor_rows_truncated",
    ]);
  });

  test("an UPDATE or DELETE of a user or realm row notifies after commit, one notification per row and transaction", async () => {
    const p = db.prisma;
    const realm = await p.realm.create({ data: { string_id: "notified", name: "Notified" } });
    const user = await p.userProfile.create({ data: { realm_id: realm.id, email: "n@x.io", delivery_email: "n@x.io", full_name: "N", api_key: "n".repeat(32) } });

    let heard = recorder.next(`u${user.id}`);
    await p.userProfile.update({ where: { id: user.id }, data: { api_key: "m".repeat(32) } });
    await heard;

    // A rolled-back change says nothing; two changes of one row in a transaction say it once.
    const from = recorder.said.length;
    await p
      .$transaction(async (tx) => {
        await tx.userProfile.update({ where: { id: user.id }, data: { full_name: "Never" } });
        throw new Error("roll back");
      })
      .catch(() => undefined);
    await p.$transaction(async (tx) => {
      await tx.userProfile.update({ where: { id: user.id }, data: { full_name: "Twice" } });
      await tx.userProfile.update({ where: { id: user.id }, data: { full_name: "Twice again" } });
      await tx.realm.update({ where: { id: realm.id }, data: { description: "changed" } });
    });
    // Notifications arrive in commit order: once this one is heard, so is everything before it.
    heard = recorder.next("u0");
    await p.$executeRaw`SELECT pg_notify('actor_rows', 'u0')`;
    await heard;
    // (The user_profile triggers of earlier migrations update the realm row as well.)
    expect(recorder.said.slice(from).sort()).toEqual([`r${realm.id}`, `u${user.id}`, "u0"].sort());

    heard = recorder.next(`u${user.id}`);
    await p.userProfile.delete({ where: { id: user.id } });
    await heard;
  });

  test("a TRUNCATE says `*`", async () => {
    const heard = recorder.next("*");
    await db.prisma.$executeRawUnsafe("TRUNCATE user_profile, realm CASCADE");
    await heard;
  });

  test("a killed connection is reported lost, and the listener connects and hears again", async () => {
    const lost = recorder.next("lost");
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    try {
      const killed = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()", [LISTENER_NAME]);
      expect(killed.rowCount).toBe(1);
      await lost;
      const back = recorder.next("listening");
      await back;
      const heard = recorder.next("r4242");
      await admin.query("SELECT pg_notify('actor_rows', 'r4242')");
      await heard;
    } finally {
      await admin.end();
    }
  });

  test("a closed listener says lost once and does not come back", async () => {
    const closing = db.listen!(ACTOR_ROWS_CHANNEL, `${LISTENER_NAME}-closed`, new Recorder());
    const own = new Recorder();
    const listening = own.next("listening");
    const second = db.listen!(ACTOR_ROWS_CHANNEL, `${LISTENER_NAME}-second`, own);
    await listening;
    await closing.close();
    await second.close();
    const sessions = async () => {
      const [row] = await db.prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name LIKE ${`${LISTENER_NAME}-%`}`;
      return Number(row.n);
    };
    // A backend leaves pg_stat_activity a moment after its client said goodbye.
    for (const started = Date.now(); (await sessions()) > 0 && Date.now() - started < WAIT_MS; ) await new Promise((resolve) => setTimeout(resolve, 20));
    // Past the first reconnect's delay (100 ms), nothing came back.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await sessions()).toBe(0);
    expect(own.said).toEqual(["listening", "lost"]);
  });
});

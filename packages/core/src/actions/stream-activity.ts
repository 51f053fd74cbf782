// Streams' is_recently_active (feature level 323): whether the stream had a message in the last 180
// days (Zulip's Stream.LAST_ACTIVITY_DAYS_BEFORE_FOR_ACTIVE), the deterministic source of truth
// for clients' demote_inactive_streams. Zulip keeps the column with a daily job that marks the
// inactive ones and with each message sent to an inactive stream; here the worker's hourly pass
// does both ways, each change with Zulip's `stream update` event to those who can see the stream.
import type { PrismaClient, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { usersWhoCanSeeStream } from "./subscriptions.ts";

export const RECENTLY_ACTIVE_DAYS = 180;
const DAY_MS = 24 * 60 * 60 * 1000;

interface Runner {
  run<T>(realmId: number, work: (tx: Tx, events: EventRecorder) => Promise<T>): Promise<T>;
}

/** Brings every stream's is_recently_active up to date; returns how many changed. */
export async function refreshStreamRecentActivity(prisma: Pick<PrismaClient, "$queryRaw">, actions: Runner, now = new Date()): Promise<number> {
  const since = new Date(now.getTime() - RECENTLY_ACTIVE_DAYS * DAY_MS);
  // Each stream's newest message, by the (recipient_id, id) index: one row read per stream.
  const rows = await prisma.$queryRaw<Array<{ id: number; realm_id: number; active: boolean }>>`
    SELECT st.id, st.realm_id, coalesce((
      SELECT m.date_sent > ${since} FROM message m WHERE m.recipient_id = st.recipient_id ORDER BY m.id DESC LIMIT 1
    ), false) AS active
    FROM stream st JOIN realm r ON r.id = st.realm_id
    WHERE NOT r.deactivated AND st.is_recently_active IS DISTINCT FROM coalesce((
      SELECT m.date_sent > ${since} FROM message m WHERE m.recipient_id = st.recipient_id ORDER BY m.id DESC LIMIT 1
    ), false)`;
  const byRealm = new Map<number, Array<{ id: number; active: boolean }>>();
  for (const row of rows) byRealm.set(row.realm_id, [...(byRealm.get(row.realm_id) ?? []), row]);
  let changed = 0;
  for (const [realmId, streams] of byRealm) {
    changed += await actions.run(realmId, (tx, events) => setRecentlyActive(tx, events, realmId, streams));
  }
  return changed;
}

async function setRecentlyActive(tx: Tx, events: EventRecorder, realmId: number, changes: Array<{ id: number; active: boolean }>): Promise<number> {
  let changed = 0;
  for (const { id, active } of changes) {
    const updated = await tx.stream.updateMany({ where: { id, realm_id: realmId, is_recently_active: !active }, data: { is_recently_active: active } });
    if (updated.count === 0) continue;
    changed += 1;
    const stream = await tx.stream.findUniqueOrThrow({ where: { id } });
    events.send({ type: "stream", op: "update", stream_id: id, name: stream.name, property: "is_recently_active", value: active }, await usersWhoCanSeeStream(tx, stream));
  }
  // The column is not one the trigger of migration 0005 counts: the nodes' copies of the realm's streams are read again.
  if (changed > 0) await tx.$executeRaw`UPDATE realm SET stream_generation = stream_generation + 1 WHERE id = ${realmId}`;
  return changed;
}

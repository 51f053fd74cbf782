// Streams' weekly traffic (Zulip's stream_weekly_traffic, feature level 199): messages a week over
// the last four weeks, from the stream's age when it is younger than that, and null while it is
// younger than a week. Zulip reads it from its analytics counts; here a worker refreshes a column
// (stream.stream_weekly_traffic) every hour, in one pass over the last four weeks' messages.
import type { PrismaClient } from "@chat/db";

const DAY_MS = 24 * 60 * 60 * 1000;

/** Zulip's round_to_2_significant_digits. */
function roundToTwoSignificantDigits(n: number): number {
  if (n < 100) return n;
  const magnitude = 10 ** (Math.floor(Math.log10(n)) - 1);
  return Math.round(n / magnitude) * magnitude;
}

/** Zulip's get_average_weekly_stream_traffic: null under a week old. */
export function averageWeeklyTraffic(createdAt: Date, messagesInFourWeeks: number, now = new Date()): number | null {
  const ageDays = Math.floor((now.getTime() - createdAt.getTime()) / DAY_MS);
  let average: number;
  if (ageDays >= 28) average = Math.floor(messagesInFourWeeks / 4);
  else if (ageDays >= 7) average = Math.floor((messagesInFourWeeks * 7) / ageDays);
  else return null;
  if (average === 0 && messagesInFourWeeks > 0) average = 1;
  return roundToTwoSignificantDigits(average);
}

/**
 * Sets every active stream's weekly traffic; returns how many changed. The realms whose streams
 * changed get a new stream_generation, so the nodes' copies of their streams are read again (the
 * column is not one the trigger of migration 0005 counts). No events: Zulip sends none either.
 */
export async function refreshStreamWeeklyTraffic(prisma: Pick<PrismaClient, "$queryRaw" | "$executeRaw">, now = new Date()): Promise<number> {
  const since = new Date(now.getTime() - 28 * DAY_MS);
  // The newest message older than four weeks, found from the newest message back: the counts
  // then read only the last four weeks by primary key.
  const [before] = await prisma.$queryRaw<Array<{ id: number }>>`SELECT id FROM message WHERE date_sent <= ${since} ORDER BY id DESC LIMIT 1`;
  const counts = await prisma.$queryRaw<Array<{ id: number; realm_id: number; date_created: Date; current: number | null; messages: number }>>`
    SELECT st.id, st.realm_id, st.date_created, st.stream_weekly_traffic AS current, coalesce(c.messages, 0)::int AS messages
    FROM stream st
    LEFT JOIN (
      SELECT recipient_id, count(*) AS messages FROM message
      WHERE id > ${before?.id ?? 0} AND date_sent > ${since} GROUP BY recipient_id
    ) c ON c.recipient_id = st.recipient_id
    WHERE NOT st.deactivated`;
  const changed = counts
    .map((row) => ({ ...row, traffic: averageWeeklyTraffic(row.date_created, row.messages, now) }))
    .filter((row) => row.traffic !== row.current);
  if (changed.length === 0) return 0;
  await prisma.$executeRaw`
    UPDATE stream s SET stream_weekly_traffic = t.traffic
    FROM unnest(${changed.map((row) => row.id)}::int[], ${changed.map((row) => row.traffic)}::int[]) AS t(id, traffic)
    WHERE s.id = t.id`;
  const realms = [...new Set(changed.map((row) => row.realm_id))];
  await prisma.$executeRaw`UPDATE realm SET stream_generation = stream_generation + 1 WHERE id = ANY(${realms}::int[])`;
  return changed.length;
}

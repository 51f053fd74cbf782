// Presence as clients read it (Zulip's zerver/lib/presence.py, legacy format): per user, one entry
// per client plus `aggregated`, the most recent client's.
import type { Tx } from "@chat/db";

type Reader = Pick<Tx, "$queryRaw">;

export const PRESENCE_ACTIVE = 1;
export const PRESENCE_IDLE = 2;
/** Presence older than this is not reported for the organization (Zulip: two weeks). */
export const PRESENCE_HISTORY_DAYS = 14;

export interface ClientPresence {
  client: string;
  status: "active" | "idle";
  timestamp: number;
  pushable: boolean;
}

export type UserPresenceInfo = Record<string, ClientPresence | Omit<ClientPresence, "pushable">>;

interface PresenceRow {
  user_id: number;
  email: string;
  client_name: string;
  status: number;
  timestamp: Date;
  date_joined: Date;
}

/**
 * slim_presence's form (Zulip's modern presence): when the user was last active, and last connected
 * at all, on any client. Never active reads as active when they joined, as in Zulip.
 */
export interface ModernPresence {
  active_timestamp: number;
  idle_timestamp: number;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** Each user's modern presence from their clients' rows, keyed by user id. */
function modernPresences(rows: PresenceRow[]): Record<string, ModernPresence> {
  const result: Record<string, ModernPresence> = {};
  for (const row of [...rows].sort((a, b) => a.user_id - b.user_id)) {
    const entry = (result[String(row.user_id)] ??= { active_timestamp: seconds(row.date_joined), idle_timestamp: 0 });
    const at = seconds(row.timestamp);
    entry.idle_timestamp = Math.max(entry.idle_timestamp, at);
    if (row.status === PRESENCE_ACTIVE && at > entry.active_timestamp) entry.active_timestamp = at;
  }
  return result;
}

export function presenceStatusName(status: number): "active" | "idle" {
  return status === PRESENCE_ACTIVE ? "active" : "idle";
}

export function formatClientPresence(row: { client_name: string; status: number; timestamp: Date }): ClientPresence {
  // pushable: offline push enabled and a registered mobile device; this server has no push devices.
  return { client: row.client_name, status: presenceStatusName(row.status), timestamp: Math.floor(row.timestamp.getTime() / 1000), pushable: false };
}

/** Rows sorted by user, then time, grouped into presence objects keyed by email or (slim) user id. */
function formatPresenceRows(rows: PresenceRow[], slim: boolean): Record<string, UserPresenceInfo> {
  const sorted = [...rows].sort((a, b) => a.user_id - b.user_id || a.timestamp.getTime() - b.timestamp.getTime());
  const result: Record<string, UserPresenceInfo> = {};
  for (const row of sorted) {
    const key = slim ? String(row.user_id) : row.email;
    const info = formatClientPresence(row);
    const entry = (result[key] ??= {});
    entry[info.client] = info;
    entry.aggregated = { client: info.client, status: info.status, timestamp: info.timestamp };
  }
  return result;
}

/**
 * The organization's presence (Zulip's get_presences_for_realm): active human users, last two
 * weeks; by email, or with slim_presence in the modern form by user id (as Zulip since 3.0).
 */
/**
 * Feature level 288's history_limit_days: presences reported within this many days (Zulip's
 * default, 14, when not given; none for 0). Bounded so the interval stays a date.
 */
export function presenceHistoryDays(historyLimitDays: number | undefined): number {
  if (historyLimitDays === undefined) return PRESENCE_HISTORY_DAYS;
  return Math.min(Math.max(historyLimitDays, 0), MAX_PRESENCE_HISTORY_DAYS);
}
/** About a century: more than any presence row is old. */
const MAX_PRESENCE_HISTORY_DAYS = 36_500;

export async function getRealmPresences(db: Reader, realmId: number, slim: false, historyLimitDays?: number): Promise<Record<string, UserPresenceInfo>>;
export async function getRealmPresences(db: Reader, realmId: number, slim: boolean, historyLimitDays?: number): Promise<Record<string, UserPresenceInfo> | Record<string, ModernPresence>>;
export async function getRealmPresences(db: Reader, realmId: number, slim: boolean, historyLimitDays?: number): Promise<Record<string, UserPresenceInfo> | Record<string, ModernPresence>> {
  const days = presenceHistoryDays(historyLimitDays);
  const rows = await db.$queryRaw<PresenceRow[]>`
    SELECT p.user_id, u.email, p.client_name, p.status, p.timestamp, u.date_joined
    FROM user_presence p JOIN user_profile u ON u.id = p.user_id
    WHERE p.realm_id = ${realmId} AND ${days} > 0 AND p.timestamp >= now() - make_interval(days => ${days})
      AND u.is_active AND NOT u.is_bot`;
  return slim ? modernPresences(rows) : formatPresenceRows(rows, false);
}

/**
 * The presences changed since `sinceId` (feature level 263's presence_last_update_id; -1 or less
 * for all), in the modern form, and the number to ask from next time: the newest change's, or
 * `sinceId` when nothing changed. A user's presence is made from all their clients' rows, so a
 * user with any changed row is sent whole.
 */
export async function getRealmPresencesSince(db: Reader, realmId: number, sinceId: number, historyLimitDays?: number): Promise<{ presences: Record<string, ModernPresence>; lastUpdateId: number }> {
  const days = presenceHistoryDays(historyLimitDays);
  const rows = await db.$queryRaw<Array<PresenceRow & { last_update_id: bigint }>>`
    SELECT p.user_id, u.email, p.client_name, p.status, p.timestamp, u.date_joined, p.last_update_id
    FROM user_presence p JOIN user_profile u ON u.id = p.user_id
    WHERE p.realm_id = ${realmId} AND ${days} > 0 AND p.timestamp >= now() - make_interval(days => ${days})
      AND u.is_active AND NOT u.is_bot
      AND p.user_id IN (SELECT user_id FROM user_presence WHERE realm_id = ${realmId} AND last_update_id > ${sinceId})`;
  let lastUpdateId = sinceId;
  for (const row of rows) lastUpdateId = Math.max(lastUpdateId, Number(row.last_update_id));
  return { presences: modernPresences(rows), lastUpdateId };
}

/** The organization's newest presence change (feature level 263), or -1 when there is none. */
export async function lastPresenceUpdateId(db: Reader, realmId: number): Promise<number> {
  const [row] = await db.$queryRaw<Array<{ id: bigint | null }>>`SELECT max(last_update_id) AS id FROM user_presence WHERE realm_id = ${realmId}`;
  return row?.id === null || row?.id === undefined ? -1 : Number(row.id);
}

/**
 * A user's presence as Zulip gives it since feature level 178, which no longer keeps the client:
 * the most recent report under `website`, and `aggregated`.
 */
export function websitePresence(info: Record<string, { status: string; timestamp: number }>): UserPresenceInfo {
  const latest = info.aggregated ?? Object.values(info).reduce((a, b) => (b.timestamp > a.timestamp ? b : a));
  return {
    website: { client: "website", status: latest.status as ClientPresence["status"], timestamp: latest.timestamp, pushable: false },
    aggregated: { client: "website", status: latest.status as ClientPresence["status"], timestamp: latest.timestamp },
  };
}

/** One user's presence object, or null when the user never reported any. */
export async function getUserPresence(db: Reader, userId: number): Promise<UserPresenceInfo | null> {
  const rows = await db.$queryRaw<PresenceRow[]>`
    SELECT p.user_id, u.email, p.client_name, p.status, p.timestamp, u.date_joined
    FROM user_presence p JOIN user_profile u ON u.id = p.user_id WHERE p.user_id = ${userId}`;
  return rows.length === 0 ? null : Object.values(formatPresenceRows(rows, true))[0];
}

import type { Tx } from "@chat/db";

type Reader = Pick<Tx, "$queryRaw">;

export interface UserStatusInfo {
  away?: true;
  status_text?: string;
  /** Feature level 86: the status's emoji, when it has one. */
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

interface StatusRow {
  status: number;
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/** A status row as the API gives it: only what differs from the default. */
function statusInfo(row: StatusRow): UserStatusInfo {
  const info: UserStatusInfo = {};
  if (row.status === 1) info.away = true;
  if (row.status_text) info.status_text = row.status_text;
  if (row.emoji_name) Object.assign(info, { emoji_name: row.emoji_name, emoji_code: row.emoji_code, reaction_type: row.reaction_type });
  return info;
}

// `away` is the user's presence_enabled turned over (feature level 148), whatever the status row says.

/** One user's status (Zulip's get_user_status): `{}` for someone who never set one. */
export async function getUserStatus(db: Reader, userId: number): Promise<UserStatusInfo> {
  const rows = await db.$queryRaw<StatusRow[]>`
    SELECT CASE WHEN u.presence_enabled THEN 0 ELSE 1 END AS status, coalesce(s.status_text, '') AS status_text,
           coalesce(s.emoji_name, '') AS emoji_name, coalesce(s.emoji_code, '') AS emoji_code, coalesce(s.reaction_type, 'unicode_emoji') AS reaction_type
    FROM user_profile u LEFT JOIN user_status s ON s.user_id = u.id WHERE u.id = ${userId}`;
  return rows.length === 0 ? {} : statusInfo(rows[0]);
}

/** The organization's non-default statuses by user id (Zulip's get_user_info_dict), active users only. */
export async function getUserStatuses(db: Reader, realmId: number): Promise<Record<string, UserStatusInfo>> {
  const rows = await db.$queryRaw<Array<StatusRow & { user_id: number }>>`
    SELECT u.id AS user_id, CASE WHEN u.presence_enabled THEN 0 ELSE 1 END AS status, coalesce(s.status_text, '') AS status_text,
           coalesce(s.emoji_name, '') AS emoji_name, coalesce(s.emoji_code, '') AS emoji_code, coalesce(s.reaction_type, 'unicode_emoji') AS reaction_type
    FROM user_profile u LEFT JOIN user_status s ON s.user_id = u.id
    WHERE u.realm_id = ${realmId} AND u.is_active AND (NOT u.presence_enabled OR s.status_text <> '' OR s.emoji_name <> '')
    ORDER BY u.id`;
  const result: Record<string, UserStatusInfo> = {};
  for (const row of rows) result[String(row.user_id)] = statusInfo(row);
  return result;
}

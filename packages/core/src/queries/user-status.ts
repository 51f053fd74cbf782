import type { Tx } from "@chat/db";

type Reader = Pick<Tx, "$queryRaw">;

export interface UserStatusInfo {
  away?: true;
  status_text?: string;
}

/** A status row as the API gives it: only what differs from the default. */
function statusInfo(row: { status: number; status_text: string }): UserStatusInfo {
  const info: UserStatusInfo = {};
  if (row.status === 1) info.away = true;
  if (row.status_text) info.status_text = row.status_text;
  return info;
}

/** One user's status (Zulip's get_user_status): `{}` for someone who never set one. */
export async function getUserStatus(db: Reader, userId: number): Promise<UserStatusInfo> {
  const rows = await db.$queryRaw<{ status: number; status_text: string }[]>`SELECT status, status_text FROM user_status WHERE user_id = ${userId}`;
  return rows.length === 0 ? {} : statusInfo(rows[0]);
}

/** The organization's non-default statuses by user id (Zulip's get_user_info_dict), active users only. */
export async function getUserStatuses(db: Reader, realmId: number): Promise<Record<string, UserStatusInfo>> {
  const rows = await db.$queryRaw<{ user_id: number; status: number; status_text: string }[]>`
    SELECT s.user_id, s.status, s.status_text FROM user_status s JOIN user_profile u ON u.id = s.user_id
    WHERE u.realm_id = ${realmId} AND u.is_active AND (s.status <> 0 OR s.status_text <> '')
    ORDER BY s.user_id`;
  const result: Record<string, UserStatusInfo> = {};
  for (const row of rows) result[String(row.user_id)] = statusInfo(row);
  return result;
}

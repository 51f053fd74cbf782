import type { Tx } from "@chat/db";

type Reader = Pick<Tx, "$queryRaw">;

export interface UserStatusInfo {
  away?: true;
  status_text?: string;
}

/** The organization's non-default statuses by user id (Zulip's get_user_info_dict), active users only. */
export async function getUserStatuses(db: Reader, realmId: number): Promise<Record<string, UserStatusInfo>> {
  const rows = await db.$queryRaw<{ user_id: number; status: number; status_text: string }[]>`
    SELECT s.user_id, s.status, s.status_text FROM user_status s JOIN user_profile u ON u.id = s.user_id
    WHERE u.realm_id = ${realmId} AND u.is_active AND (s.status <> 0 OR s.status_text <> '')
    ORDER BY s.user_id`;
  const result: Record<string, UserStatusInfo> = {};
  for (const row of rows) {
    const info: UserStatusInfo = {};
    if (row.status === 1) info.away = true;
    if (row.status_text) info.status_text = row.status_text;
    result[String(row.user_id)] = info;
  }
  return result;
}

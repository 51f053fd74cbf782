// The users a user muted (Zulip's zerver/lib/muted_users.py): what /register's `muted_users` and
// the `muted_users` event carry.
import type { Tx } from "@chat/db";
import { unixSeconds } from "./user-topics.ts";

type Reader = Pick<Tx, "$queryRaw">;

/** An item of `muted_users`: the muted user and when they were muted (Zulip's get_user_mutes). */
export interface MutedUserItem {
  id: number;
  timestamp: number;
}

/** The users `userId` muted, in the order they were muted. */
export async function mutedUsersOf(db: Reader, userId: number): Promise<MutedUserItem[]> {
  const rows = await db.$queryRaw<Array<{ muted_user_id: number; date_muted: Date }>>`
    SELECT muted_user_id, date_muted FROM muted_user WHERE user_id = ${userId} ORDER BY id`;
  return rows.map((row) => ({ id: row.muted_user_id, timestamp: unixSeconds(row.date_muted) }));
}

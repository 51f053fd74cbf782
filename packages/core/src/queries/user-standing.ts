import { leanSql, Prisma } from "@chat/db";
import { isGuest } from "../lib/roles.ts";

/**
 * Whether the user may have a queue of every public stream's messages (Zulip's
 * events_register_backend: not a guest), as the database says now rather than the request's copy
 * of the user: /register asks again once its queue exists (apps/events/src/routes.ts).
 */
export async function mayReceiveAllPublicStreams(db: Parameters<typeof leanSql>[0], userId: number): Promise<boolean> {
  const [user] = await leanSql(db).query<{ role: number; is_active: boolean }>(Prisma.sql`SELECT role, is_active FROM user_profile WHERE id = ${userId}`, { prepare: true });
  return user !== undefined && user.is_active && !isGuest(user);
}

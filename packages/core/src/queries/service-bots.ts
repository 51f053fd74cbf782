// A service bot as the worker tier needs it to deliver a job: the bot as an actor (it sends the
// reply), its realm, and its service. One query.
import { leanSql, Prisma, type PrismaClient } from "@chat/db";
import { ACTOR_COLUMNS, actorFromRow, type ActorRow } from "../auth.ts";
import type { WebhookService } from "../lib/outgoing-webhook.ts";
import type { Actor } from "../models.ts";

export interface ServiceBot {
  bot: Actor;
  /** Its first service (Zulip's bots have one); null if it has none. */
  service: (WebhookService & { name: string }) | null;
}

/** The bot, or null if no such user exists. Whether it is active and a service bot is the caller's to check. */
export async function loadServiceBot(prisma: PrismaClient, botId: number): Promise<ServiceBot | null> {
  const rows = await leanSql(prisma).query<ActorRow & { service: ServiceBot["service"] }>(Prisma.sql`
    SELECT ${ACTOR_COLUMNS},
           (SELECT json_build_object('name', s.name, 'base_url', s.base_url, 'token', s.token, 'interface', s.interface)
            FROM service s WHERE s.user_id = u.id ORDER BY s.id LIMIT 1) AS service
    FROM user_profile u JOIN realm r ON r.id = u.realm_id WHERE u.id = ${botId}`, { prepare: true });
  const row = rows[0];
  return row ? { bot: actorFromRow(row), service: row.service } : null;
}

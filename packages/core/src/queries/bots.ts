// What realm_bots, realm_bot events and GET /bots show of bots besides their rows: services,
// configuration and default stream names, read for any number of bots in three queries.
import type { PrismaClient, Tx } from "@chat/db";
import type { UserProfile } from "../models.ts";
import { BOT_TYPE_EMBEDDED, serviceDicts, type BotExtras } from "../lib/bots.ts";
import { formatOwnedBot } from "../lib/user-format.ts";

type Reader = Pick<Tx, "stream" | "service" | "botConfigData">;

/** Each bot's extras, by bot id. */
export async function botExtras(db: Reader, bots: UserProfile[]): Promise<Map<number, BotExtras>> {
  const ids = bots.map((bot) => bot.id);
  const streamIds = [...new Set(bots.flatMap((bot) => [bot.default_sending_stream_id, bot.default_events_register_stream_id]).filter((id): id is number => id !== null))];
  const embeddedIds = bots.filter((bot) => bot.bot_type === BOT_TYPE_EMBEDDED).map((bot) => bot.id);
  const [streams, services, configs] = await Promise.all([
    streamIds.length === 0 ? [] : db.stream.findMany({ where: { id: { in: streamIds } }, select: { id: true, name: true } }),
    ids.length === 0 ? [] : db.service.findMany({ where: { user_id: { in: ids } }, orderBy: { id: "asc" } }),
    embeddedIds.length === 0 ? [] : db.botConfigData.findMany({ where: { bot_profile_id: { in: embeddedIds } }, orderBy: { key: "asc" } }),
  ]);
  const streamNames = new Map(streams.map((stream) => [stream.id, stream.name]));
  const nameOf = (id: number | null) => (id === null ? null : (streamNames.get(id) ?? null));
  const result = new Map<number, BotExtras>();
  for (const bot of bots) {
    const config = Object.fromEntries(configs.filter((row) => row.bot_profile_id === bot.id).map((row) => [row.key, row.value]));
    result.set(bot.id, {
      services: serviceDicts(bot.bot_type, services.filter((service) => service.user_id === bot.id), config),
      defaultSendingStream: nameOf(bot.default_sending_stream_id),
      defaultEventsRegisterStream: nameOf(bot.default_events_register_stream_id),
    });
  }
  return result;
}

/** Bots as realm_bots lists them. */
export async function ownedBotDicts(db: Reader, bots: UserProfile[]): Promise<Array<Record<string, unknown>>> {
  const extras = await botExtras(db, bots);
  return bots.map((bot) => formatOwnedBot(bot, extras.get(bot.id)!));
}

/** One bot as realm_bots lists it, and as `realm_bot add` carries it. */
export async function ownedBotDict(db: Reader, bot: UserProfile): Promise<Record<string, unknown>> {
  return (await ownedBotDicts(db, [bot]))[0];
}

/** A bot's configuration (bot_config_data), keys in order. */
export async function botConfig(db: Pick<Tx, "botConfigData">, botId: number): Promise<Record<string, string>> {
  const rows = await db.botConfigData.findMany({ where: { bot_profile_id: botId }, orderBy: { key: "asc" } });
  return Object.fromEntries(rows.map((row) => [row.key, row.value]));
}

/**
 * The narrow a queue gets when /register names none: a bot's default_events_register_stream
 * (Zulip's _default_narrow); none for everybody else.
 */
export async function defaultEventsNarrow(prisma: PrismaClient, actor: Pick<UserProfile, "default_events_register_stream_id">): Promise<Array<[string, string]>> {
  if (actor.default_events_register_stream_id === null) return [];
  const stream = await prisma.stream.findUnique({ where: { id: actor.default_events_register_stream_id }, select: { name: true } });
  return stream ? [["stream", stream.name]] : [];
}

/**
 * The active bots a user controls, oldest first: the bots they own and, however those came to own
 * bots (a bot could create bots before /bots refused bots; migration 0020 gave such bots to the
 * person above them), the bots those own, to any depth. The walk goes through deactivated bots
 * too, so a bot below one is found.
 */
export async function activeBotsControlledBy(db: Pick<Tx, "$queryRaw" | "userProfile">, userId: number): Promise<UserProfile[]> {
  const rows = await db.$queryRaw<Array<{ id: number }>>`
    WITH RECURSIVE controlled(id) AS (
      SELECT id FROM user_profile WHERE bot_owner_id = ${userId} AND is_bot
      UNION
      SELECT bot.id FROM user_profile bot JOIN controlled ON bot.bot_owner_id = controlled.id WHERE bot.is_bot
    )
    SELECT id FROM controlled`;
  if (rows.length === 0) return [];
  return db.userProfile.findMany({ where: { id: { in: rows.map((row) => row.id) }, is_active: true }, orderBy: { id: "asc" } });
}

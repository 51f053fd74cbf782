// The server's own bots (Zulip's cross-realm bots: the Notification Bot). Zulip keeps them in a
// system realm; here each realm has its own rows, so that their messages are ordinary messages of
// the realm, but clients see them as Zulip shows them: in `cross_realm_bots`, not among the
// realm's users. They exist from the realm's creation, so a client that registered earlier can
// always resolve a message's sender.
import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import type { Realm, UserProfile } from "../models.ts";
import { RECIPIENT_PERSONAL } from "../lib/recipients.ts";
import { generateApiKey } from "../lib/secrets.ts";
import { formatUser } from "../lib/user-format.ts";
import { activeUserIds } from "../queries/users.ts";

export const SYSTEM_BOTS = {
  notification: { localPart: "notification-bot", fullName: "Notification Bot" },
} as const;

export type SystemBotName = keyof typeof SYSTEM_BOTS;

const LOCAL_PARTS = new Set<string>(Object.values(SYSTEM_BOTS).map((bot) => bot.localPart));

type BotFields = Pick<UserProfile, "is_bot" | "bot_owner_id" | "delivery_email">;

/**
 * Whether a user is one of the server's bots: ownerless, with a system bot's address. Known by the
 * address's local part, so a change of EXTERNAL_HOST does not make a second one.
 */
export function isSystemBot(user: BotFields): boolean {
  return user.is_bot && user.bot_owner_id === null && LOCAL_PARTS.has(user.delivery_email.slice(0, user.delivery_email.indexOf("@")).toLowerCase());
}

/** A system bot as `cross_realm_bots` lists it (Zulip's get_cross_realm_dicts). */
export function formatSystemBot(bot: UserProfile): Record<string, unknown> {
  return { ...formatUser(bot, { clientGravatar: false, withDeliveryEmail: false }), bot_owner_id: null, is_cross_realm_bot: true, is_system_bot: true };
}

/** The domain of bots' addresses (Zulip's get_bot_domain): the server's host without its port. */
export function botDomain(ctx: ServerContext): string {
  return ctx.externalHost.replace(/:\d+$/, "");
}

function botEmail(ctx: ServerContext, localPart: string): string {
  return `${localPart}@${botDomain(ctx)}`;
}

async function findSystemBot(tx: Tx, realmId: number, name: SystemBotName): Promise<UserProfile | null> {
  return tx.userProfile.findFirst({
    where: { realm_id: realmId, is_bot: true, bot_owner_id: null, delivery_email: { startsWith: `${SYSTEM_BOTS[name].localPart}@`, mode: "insensitive" } },
    orderBy: { id: "asc" },
  });
}

async function createSystemBot(tx: Tx, events: EventRecorder, ctx: ServerContext, realm: Realm, name: SystemBotName): Promise<UserProfile> {
  const { localPart, fullName } = SYSTEM_BOTS[name];
  const email = botEmail(ctx, localPart);
  const bot = await tx.userProfile.create({
    data: { realm_id: realm.id, email, delivery_email: email, full_name: fullName, api_key: generateApiKey(), is_bot: true, bot_type: 1 },
  });
  const recipient = await tx.recipient.create({ data: { type: RECIPIENT_PERSONAL, type_id: bot.id } });
  const created = await tx.userProfile.update({ where: { id: bot.id }, data: { recipient_id: recipient.id } });
  // Clients registered before the bot existed learn of it as they learn of any new user.
  events.send({ type: "realm_user", op: "add", person: formatSystemBot(created) }, await activeUserIds(tx, realm.id));
  return created;
}

/** The realm's system bot of this name, created if the realm predates it. */
export async function systemBot(tx: Tx, events: EventRecorder, ctx: ServerContext, realm: Realm, name: SystemBotName): Promise<UserProfile> {
  return (await findSystemBot(tx, realm.id, name)) ?? createSystemBot(tx, events, ctx, realm, name);
}

/** Creates whichever system bots the realm lacks (at its creation, and at start for older realms). */
export async function ensureSystemBots(tx: Tx, events: EventRecorder, ctx: ServerContext, realm: Realm): Promise<void> {
  for (const name of Object.keys(SYSTEM_BOTS) as SystemBotName[]) await systemBot(tx, events, ctx, realm, name);
}

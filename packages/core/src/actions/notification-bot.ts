// Zulip's "Notification Bot": the sender of the messages the server itself writes (new stream
// announcements, "you were subscribed" notes). One per realm, created the first time it is needed.
import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import type { Actor, Realm } from "../models.ts";
import { RECIPIENT_PERSONAL } from "../lib/recipients.ts";
import { generateApiKey } from "../lib/secrets.ts";
import { sendMessage, type MessageDestination } from "./messages.ts";

export const NOTIFICATION_BOT_NAME = "Notification Bot";

function botEmail(ctx: ServerContext): string {
  return `notification-bot@${ctx.externalHost.replace(/:\d+$/, "")}`;
}

async function notificationBot(tx: Tx, ctx: ServerContext, realm: Realm): Promise<Actor> {
  const email = botEmail(ctx);
  let bot = await tx.userProfile.findFirst({ where: { realm_id: realm.id, delivery_email: email } });
  if (!bot) {
    bot = await tx.userProfile.create({
      data: { realm_id: realm.id, email, delivery_email: email, full_name: NOTIFICATION_BOT_NAME, api_key: generateApiKey(), is_bot: true, bot_type: 1 },
    });
    const recipient = await tx.recipient.create({ data: { type: RECIPIENT_PERSONAL, type_id: bot.id } });
    bot = await tx.userProfile.update({ where: { id: bot.id }, data: { recipient_id: recipient.id } });
  }
  return { ...bot, realm };
}

/** Sends a message from the realm's Notification Bot, within the caller's transaction. */
export async function sendNotification(tx: Tx, events: EventRecorder, ctx: ServerContext, realm: Realm, destination: MessageDestination, content: string): Promise<void> {
  const bot = await notificationBot(tx, ctx, realm);
  // The bot may post anywhere the server needs it to, whatever the stream's posting policy.
  await sendMessage(tx, events, { ...bot, role: 200 }, { destination, content, client: "Internal" });
}

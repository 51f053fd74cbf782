// What a service bot sends after a call: its reply in the conversation that triggered it, and a
// private note to its owner when the call failed (Zulip's send_response_message and
// notify_bot_owner). Each is recorded with the message it sends, in one transaction, so a job
// that runs again (its worker died after sending) sends nothing twice.
import { leanSql, Prisma } from "@chat/db";
import type { ActionRunner } from "../events.ts";
import type { WireMessage } from "../lib/message-format.ts";
import type { Actor } from "../models.ts";
import { sendMessage, type MessageDestination } from "./messages.ts";
import { addReaction } from "./reactions.ts";

/**
 * "reply": in the conversation; "owner": to the bot's owner; "followup": where an embedded bot
 * sends a message of its own. One of each per (message, bot) at most.
 */
export type ServiceBotMessageKind = "reply" | "owner" | "followup";

/** The client name Zulip gives these messages. */
const CLIENT = "OutgoingWebhookResponse";

/**
 * Adds a reaction as the bot to the message (an embedded bot's bot_handler.react), once: a
 * reaction that exists already is left as it is.
 */
export async function reactAsServiceBot(actions: ActionRunner, bot: Actor, about: WireMessage, emojiName: string): Promise<void> {
  await actions.run(bot.realm_id, async (tx, events) => {
    const existing = await leanSql(tx).query(Prisma.sql`
      SELECT 1 FROM reaction WHERE message_id = ${about.id} AND user_id = ${bot.id} AND emoji_name = ${emojiName}`);
    if (existing.length === 0) await addReaction(tx, events, bot, about.id, { emojiName });
  });
}

function destination(bot: Actor, about: WireMessage, kind: Exclude<ServiceBotMessageKind, "followup">): MessageDestination | null {
  if (kind === "owner") return bot.bot_owner_id === null ? null : { type: "private", to: [bot.bot_owner_id] };
  if (about.type === "stream") return { type: "stream", stream: about.stream_id!, topic: about.subject };
  return { type: "private", to: (about.display_recipient as Array<{ id: number }>).map((user) => user.id) };
}

/**
 * Sends `content` as the bot; false if this (message, bot, kind) was sent before, or there is
 * nobody to send it to. A refusal (the bot may not post to the stream) throws a JsonableError.
 */
export async function sendServiceBotMessage(
  actions: ActionRunner,
  bot: Actor,
  about: WireMessage,
  kind: ServiceBotMessageKind,
  content: string,
  followupTo?: MessageDestination,
): Promise<boolean> {
  const to = kind === "followup" ? (followupTo ?? null) : destination(bot, about, kind);
  if (to === null) return false;
  return actions.run(bot.realm_id, async (tx, events) => {
    const recorded = await leanSql(tx).query(Prisma.sql`
      INSERT INTO service_bot_reply (message_id, bot_id, kind)
      SELECT id, ${bot.id}, ${kind} FROM message WHERE id = ${about.id}
      ON CONFLICT DO NOTHING RETURNING 1`);
    // Sent before, or the message was deleted meanwhile.
    if (recorded.length === 0) return false;
    await sendMessage(tx, events, bot, { destination: to, content, client: CLIENT });
    return true;
  });
}

// Embedded bots: bots this server runs itself (Zulip's EMBEDDED_BOTS, which are zulip_bots
// handlers run by its embedded_bots worker). Each is written here for what it does, in the
// protocol of zulip_bots: the message with the bot's leading mention taken off, and replies in the
// conversation through the bot.
import { botConfig, reactAsServiceBot, sendServiceBotMessage, type Actor, type WireMessage } from "@chat/core";
import type { ServiceBotDelivery } from "./service-bots.ts";

interface EmbeddedBotContext {
  delivery: ServiceBotDelivery;
  bot: Actor;
  message: WireMessage;
  /** The content without the bot's leading mention. */
  content: string;
}

/** Returns the reply to send in the conversation, or null; may send or react on its own. */
type EmbeddedBotHandler = (context: EmbeddedBotContext) => Promise<string | null>;

const HANDLERS: Record<string, EmbeddedBotHandler> = {
  // zulip_bots' helloworld: "beep boop", and a wave.
  async helloworld({ delivery, bot, message }) {
    await reactAsServiceBot(delivery.actions, bot, message, "wave");
    return "beep boop";
  },

  // zulip_bots' encrypt: ROT13 both ways.
  async encrypt({ content }) {
    return `Encrypted/Decrypted text: ${rot13(content)}`;
  },

  // zulip_bots' followup: copies the message to a followup stream (config "stream", default
  // "followup"), under a topic named after its sender.
  async followup({ delivery, bot, message, content }) {
    if (content === "") return "Please specify the message you want to send to followup stream after @mention-bot";
    if (content === "help") return FOLLOWUP_USAGE;
    const stream = (await botConfig(delivery.prisma, bot.id)).stream ?? "followup";
    await sendServiceBotMessage(delivery.actions, bot, message, "followup", `from ${message.sender_email}: ${content}`, {
      type: "stream",
      stream,
      topic: message.sender_email,
    });
    return null;
  },
};

const FOLLOWUP_USAGE = `This plugin will allow users to flag messages as being follow-up items.  Users should preface messages with "@mention-bot".

Before running this, make sure to create a stream called "followup" that your API user can send to.`;

/** The embedded bots this server runs (the names POST /bots accepts as service_name). */
export const EMBEDDED_BOT_NAMES = Object.keys(HANDLERS);

/** Runs the embedded bot `name` on a message; returns its reply, or null. */
export async function runEmbeddedBot(delivery: ServiceBotDelivery, bot: Actor, name: string, message: WireMessage): Promise<string | null> {
  const handler = Object.hasOwn(HANDLERS, name) ? HANDLERS[name] : undefined;
  if (handler === undefined) return null;
  // A stream message reaches the bot only when it starts with the bot's mention (zulip_bots'
  // extract_query_without_mention); a private message as it is.
  const content = message.type === "stream" ? withoutLeadingMention(message.raw_content, bot) : message.raw_content;
  if (content === null) return null;
  return handler({ delivery, bot, message, content });
}

/** The content after a leading `@**Name**` or `@**Name|id**` naming the bot, or null if it does not start so. */
export function withoutLeadingMention(content: string, bot: Pick<Actor, "id" | "full_name">): string | null {
  const match = /^@_?\*\*([^|*]+)(?:\|(\d+))?\*\*/.exec(content);
  if (match === null) return null;
  // The id or the name, as zulip_bots accepts either.
  if (Number(match[2]) !== bot.id && match[1] !== bot.full_name) return null;
  return content.slice(match[0].length).trimStart();
}

function rot13(text: string): string {
  return text.replace(/[a-zA-Z]/g, (char) => {
    const base = char <= "Z" ? 65 : 97;
    return String.fromCharCode(((char.charCodeAt(0) - base + 13) % 26) + base);
  });
}

// A fetched message as JSON text, joined from pieces the message cache keeps already serialized:
// the same fields, with the same values, as finalizeMessage gives an event (tested against it),
// without building an object per message and serializing it again on every fetch.
import type { CachedMessage, CachedSender } from "../queries/message-cache.ts";
import { flagsToNames } from "./message-flags.ts";
import { EMPTY_TOPIC_DISPLAY_NAME } from "./empty-topic.ts";

/** The cached fields of a message in the empty topic (they start with its subject) for a client without allow_empty_topic_name. */
const EMPTY_SUBJECT_FIELD = `"subject":""`;
const DISPLAYED_SUBJECT_FIELD = `"subject":${JSON.stringify(EMPTY_TOPIC_DISPLAY_NAME)}`;

function rowFields(message: CachedMessage, recipient: MessageRecipientJson, context: MessageJsonContext): string {
  if (message.subject !== "" || recipient.streamId === null || context.allowEmptyTopicName === true) return message.fields;
  return DISPLAYED_SUBJECT_FIELD + message.fields.slice(EMPTY_SUBJECT_FIELD.length);
}

export interface MessageJsonContext {
  /** The realm's string_id as JSON (sender_realm_str). */
  realmJson: string;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /** Senders and reactors of the page. */
  users: Map<number, CachedSender>;
  /** allow_empty_topic_name (feature level 334): without it, the empty topic reads as its display name. */
  allowEmptyTopicName?: boolean;
}

export interface MessageRecipientJson {
  /** The stream's id, or null for a private message. */
  streamId: number | null;
  displayRecipientJson: string;
  topicLinksJson: string;
  /** What the user sees as recipient_id, when not the message's (an incoming one-to-one message, feature level 327). */
  recipientId?: number;
}

/** A message the user has no row for was read from the stream's history. */
const HISTORICAL_FLAGS = JSON.stringify(["read", "historical"]);
const flagsJsonByBits = new Map<number, string>();

function flagsJson(bits: number | null): string {
  if (bits === null) return HISTORICAL_FLAGS;
  let json = flagsJsonByBits.get(bits);
  if (json === undefined) {
    json = JSON.stringify(flagsToNames(bits));
    // Few combinations occur; the bound guards against a flood of internal bits.
    if (flagsJsonByBits.size < 4096) flagsJsonByBits.set(bits, json);
  }
  return json;
}

function reactionsJson(message: CachedMessage, users: Map<number, CachedSender>): string {
  if (message.reactions === null) return "[]";
  const parts: string[] = [];
  for (const reaction of message.reactions) {
    const user = users.get(reaction.user_id);
    if (user === undefined) continue;
    parts.push(
      JSON.stringify({
        emoji_name: reaction.emoji_name,
        emoji_code: reaction.emoji_code,
        reaction_type: reaction.reaction_type,
        user_id: reaction.user_id,
        user: { user_id: reaction.user_id, email: user.email, full_name: user.full_name },
      }),
    );
  }
  return `[${parts.join(",")}]`;
}

/** The contract's Message object for one user, or null when its sender is unknown. */
export function messageJson(
  message: CachedMessage,
  recipient: MessageRecipientJson,
  flags: number | null,
  context: MessageJsonContext,
  extra: Record<string, unknown> | null = null,
): string | null {
  const sender = context.users.get(message.sender_id);
  if (sender === undefined) return null;
  const stream = recipient.streamId === null ? `"type":"private"` : `"type":"stream","stream_id":${recipient.streamId}`;
  const content = context.applyMarkdown ? `"content":${message.rendered},"content_type":"text/html"` : `"content":${message.raw},"content_type":"text/x-markdown"`;
  let json =
    `{"id":${message.id},"sender_id":${message.sender_id},${sender.fields},"sender_realm_str":${context.realmJson},` +
    `"recipient_id":${recipient.recipientId ?? message.recipient_id},${stream},"display_recipient":${recipient.displayRecipientJson},${rowFields(message, recipient, context)},` +
    `"topic_links":${recipient.topicLinksJson},"subject_links":${recipient.topicLinksJson},"reactions":${reactionsJson(message, context.users)},` +
    `"submessages":${message.submessages},${content},"avatar_url":${sender.avatar[context.clientGravatar ? 1 : 0]},"flags":${flagsJson(flags)}`;
  const extraJson = extra === null ? "" : JSON.stringify(extra).slice(1, -1);
  if (extraJson !== "") json += `,${extraJson}`;
  return `${json}}`;
}

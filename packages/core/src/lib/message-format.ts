import { avatarUrl } from "./avatars.ts";

/** A submessage as a Message carries it (a widget, or a change to one), oldest first. */
export interface Submessage {
  msg_type: string;
  /** JSON text, as its sender sent it. */
  content: string;
  message_id: number;
  sender_id: number;
  id: number;
}

/**
 * A message as stored and shared between the send path, GET /messages and the event tier; both
 * contents travel with it so each client gets the form it registered for.
 */
export interface WireMessage {
  id: number;
  sender_id: number;
  sender_full_name: string;
  sender_short_name: string;
  sender_email: string;
  sender_realm_str: string;
  sender_avatar_source: string;
  sender_avatar_version: number;
  realm_id: number;
  recipient_id: number;
  type: "stream" | "private";
  stream_id?: number;
  display_recipient: string | Array<{ id: number; email: string; full_name: string; short_name: string; is_mirror_dummy: boolean }>;
  subject: string;
  topic_links: string[];
  raw_content: string;
  rendered_content: string;
  timestamp: number;
  client: string;
  is_me_message: boolean;
  reactions: unknown[];
  submessages: Submessage[];
  last_edit_timestamp?: number;
  last_moved_timestamp?: number;
  /**
   * A one-to-one direct message's sender's personal recipient: the recipient_id the receiver sees
   * (the one their reply would have, feature level 327). The sender sees recipient_id. Never shown.
   */
  sender_recipient_id?: number;
  /** Set when the sender asked for a local echo: the queue whose event says `local_message_id`, and that id. */
  sender_queue_id?: string;
  local_id?: string;
}

/**
 * The Message object of the contract, for one client's apply_markdown and client_gravatar. Fields
 * are copied one by one rather than spread: this runs for every message of every fetch and event.
 */
export function finalizeMessage(message: WireMessage, options: { applyMarkdown: boolean; clientGravatar: boolean }): Record<string, unknown> {
  const result: Record<string, unknown> = {
    id: message.id,
    sender_id: message.sender_id,
    sender_full_name: message.sender_full_name,
    sender_short_name: message.sender_short_name,
    sender_email: message.sender_email,
    sender_realm_str: message.sender_realm_str,
    recipient_id: message.recipient_id,
    type: message.type,
  };
  if (message.stream_id !== undefined) result.stream_id = message.stream_id;
  result.display_recipient = message.display_recipient;
  result.subject = message.subject;
  result.topic_links = message.topic_links;
  result.subject_links = message.topic_links;
  result.timestamp = message.timestamp;
  result.client = message.client;
  result.is_me_message = message.is_me_message;
  result.reactions = message.reactions;
  result.submessages = message.submessages;
  if (message.last_edit_timestamp !== undefined) result.last_edit_timestamp = message.last_edit_timestamp;
  if (message.last_moved_timestamp !== undefined) result.last_moved_timestamp = message.last_moved_timestamp;
  result.content = options.applyMarkdown ? message.rendered_content : message.raw_content;
  result.content_type = options.applyMarkdown ? "text/html" : "text/x-markdown";
  result.avatar_url = avatarUrl(
    {
      id: message.sender_id,
      realm_id: message.realm_id,
      email: message.sender_email,
      avatar_source: message.sender_avatar_source,
      avatar_version: message.sender_avatar_version,
    },
    options.clientGravatar,
  );
  return result;
}

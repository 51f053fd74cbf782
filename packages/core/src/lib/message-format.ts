import { avatarUrl } from "./avatars.ts";

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
  topic_links: Array<{ text: string; url: string }>;
  raw_content: string;
  rendered_content: string;
  timestamp: number;
  client: string;
  is_me_message: boolean;
  reactions: unknown[];
  submessages: unknown[];
  last_edit_timestamp?: number;
}

/** The Message object of the contract, for one client's apply_markdown and client_gravatar. */
export function finalizeMessage(message: WireMessage, options: { applyMarkdown: boolean; clientGravatar: boolean }): Record<string, unknown> {
  const { raw_content, rendered_content, sender_avatar_source, sender_avatar_version, realm_id, ...rest } = message;
  return {
    ...rest,
    subject_links: message.topic_links,
    content: options.applyMarkdown ? rendered_content : raw_content,
    content_type: options.applyMarkdown ? "text/html" : "text/x-markdown",
    avatar_url: avatarUrl(
      { id: message.sender_id, realm_id, email: message.sender_email, avatar_source: sender_avatar_source, avatar_version: sender_avatar_version },
      options.clientGravatar,
    ),
  };
}

// Reading one message on behalf of a user (Zulip's access_message / has_message_access): the
// message is accessible if the user has a row for it, or it is in a stream whose history the user
// may read without one (public and not a guest, or subscribed to a stream with shared history).
import { fitsPostgresInteger } from "../lib/validation.ts";
import type { Tx } from "@chat/db";
import { badRequest, type JsonableError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { RECIPIENT_STREAM } from "../lib/recipients.ts";
import { isGuest } from "../lib/roles.ts";
import { contentAccessViaGroupsSql } from "./streams.ts";

export interface AccessedMessage {
  id: number;
  realm_id: number;
  sender_id: number;
  recipient_id: number;
  /** The topic ("" for private messages). */
  subject: string;
  date_sent: Date;
  recipient_type: number;
  /** Set for stream messages. */
  stream: { id: number; name: string; invite_only: boolean; history_public_to_subscribers: boolean; first_message_id: number | null } | null;
  /** The user's flags bitmask, or null when the user has no user_message row for the message. */
  user_message_flags: number | null;
}

export function invalidMessageError(): JsonableError {
  return badRequest("Invalid message(s)");
}

interface AccessRow {
  id: number;
  realm_id: number;
  sender_id: number;
  recipient_id: number;
  subject: string;
  date_sent: Date;
  recipient_type: number;
  stream_id: number | null;
  stream_name: string | null;
  invite_only: boolean | null;
  is_web_public: boolean | null;
  history_public_to_subscribers: boolean | null;
  first_message_id: number | null;
  flags: number | null;
  subscribed: boolean;
  /** Reads the stream through its can_add_subscribers_group or can_subscribe_group (feature level 354). */
  group_access: boolean;
}

/**
 * The message if `actor` may read it, else "Invalid message(s)". With `lock`, the message row is
 * locked FOR UPDATE until the transaction ends (reactions, edits and deletes serialise on it).
 */
export async function accessMessage(tx: Tx, actor: Actor, messageId: number, options: { lock?: boolean } = {}): Promise<AccessedMessage> {
  if (messageId <= 0 || !fitsPostgresInteger(messageId)) throw invalidMessageError();
  const query = options.lock
    ? tx.$queryRaw<AccessRow[]>`
        SELECT m.id, m.realm_id, m.sender_id, m.recipient_id, m.subject, m.date_sent, r.type AS recipient_type,
               s.id AS stream_id, s.name AS stream_name, s.invite_only, s.is_web_public, s.history_public_to_subscribers, s.first_message_id,
               um.flags,
               EXISTS (SELECT 1 FROM subscription sub WHERE sub.user_id = ${actor.id} AND sub.recipient_id = m.recipient_id AND sub.active) AS subscribed,
               (s.id IS NOT NULL AND ${contentAccessViaGroupsSql(actor, "s")}) AS group_access
        FROM message m
        JOIN recipient r ON r.id = m.recipient_id
        LEFT JOIN stream s ON r.type = ${RECIPIENT_STREAM} AND s.id = r.type_id
        LEFT JOIN user_message um ON um.message_id = m.id AND um.user_id = ${actor.id}
        WHERE m.id = ${messageId} AND m.realm_id = ${actor.realm_id}
        FOR UPDATE OF m`
    : tx.$queryRaw<AccessRow[]>`
        SELECT m.id, m.realm_id, m.sender_id, m.recipient_id, m.subject, m.date_sent, r.type AS recipient_type,
               s.id AS stream_id, s.name AS stream_name, s.invite_only, s.is_web_public, s.history_public_to_subscribers, s.first_message_id,
               um.flags,
               EXISTS (SELECT 1 FROM subscription sub WHERE sub.user_id = ${actor.id} AND sub.recipient_id = m.recipient_id AND sub.active) AS subscribed,
               (s.id IS NOT NULL AND ${contentAccessViaGroupsSql(actor, "s")}) AS group_access
        FROM message m
        JOIN recipient r ON r.id = m.recipient_id
        LEFT JOIN stream s ON r.type = ${RECIPIENT_STREAM} AND s.id = r.type_id
        LEFT JOIN user_message um ON um.message_id = m.id AND um.user_id = ${actor.id}
        WHERE m.id = ${messageId} AND m.realm_id = ${actor.realm_id}`;
  const [row] = await query;
  if (!row) throw invalidMessageError();
  if (row.flags === null && !canReadWithoutRow(actor, row)) throw invalidMessageError();
  return {
    id: row.id,
    realm_id: row.realm_id,
    sender_id: row.sender_id,
    recipient_id: row.recipient_id,
    subject: row.subject,
    date_sent: row.date_sent,
    recipient_type: row.recipient_type,
    stream:
      row.stream_id === null
        ? null
        : {
            id: row.stream_id,
            name: row.stream_name!,
            invite_only: row.invite_only!,
            history_public_to_subscribers: row.history_public_to_subscribers!,
            first_message_id: row.first_message_id,
          },
    user_message_flags: row.flags,
  };
}

/** Zulip's has_message_access for a user without a row: stream history they may read. */
function canReadWithoutRow(actor: Actor, row: AccessRow): boolean {
  if (row.stream_id === null) return false;
  if (!row.history_public_to_subscribers) return false;
  // A web-public stream's history is anyone's, guests' too (Zulip's can_access_stream_history).
  if (row.is_web_public && !row.invite_only) return true;
  if (!row.invite_only && !isGuest(actor)) return true;
  // A private stream's shared history: its subscribers', and (feature level 354) its
  // can_add_subscribers_group's and can_subscribe_group's (never guests': contentAccessViaGroupsSql).
  return row.subscribed || row.group_access;
}

/** The ids of the users with a user_message row for the message: who receives events about it. */
export async function messageRecipientUserIds(tx: Tx, messageId: number): Promise<number[]> {
  const rows = await tx.$queryRaw<{ user_id: number }[]>`SELECT user_id FROM user_message WHERE message_id = ${messageId} ORDER BY user_id`;
  return rows.map((row) => row.user_id);
}

// The /register `recent_private_conversations` section (Zulip's get_recent_private_conversations):
// the user's private conversations, newest first, each with its newest message id and the other
// participants (none for messages to oneself). Events are applied to the list clients get (Zulip
// keeps a raw form keyed by recipient; the list is short enough to search).
import type { PrismaClient } from "@chat/db";
import type { State } from "./initial-state.ts";
import { FLAG_BITS } from "../lib/message-flags.ts";
import { RECIPIENT_PERSONAL } from "../lib/recipients.ts";
import { markStale } from "./stale-sections.ts";

/** Zulip's RECENT_CONVERSATIONS_LIMIT: conversations among the user's newest private messages. */
export const RECENT_CONVERSATIONS_LIMIT = 1000;

const KEY = "recent_private_conversations";

interface Conversation {
  max_message_id: number;
  user_ids: number[];
}

/** The newest RECENT_CONVERSATIONS_LIMIT private messages (user_message_private_idx), by conversation, newest first. */
export async function fetchRecentConversations(prisma: PrismaClient, userId: number): Promise<Conversation[]> {
  const rows = await prisma.$queryRaw<Conversation[]>`
    WITH recent AS (
      SELECT um.message_id, m.sender_id, m.recipient_id, r.type, r.type_id
      FROM user_message um
      JOIN message m ON m.id = um.message_id
      JOIN recipient r ON r.id = m.recipient_id
      WHERE um.user_id = ${userId} AND (um.flags & ${FLAG_BITS.is_private}) <> 0
      ORDER BY um.message_id DESC
      LIMIT ${RECENT_CONVERSATIONS_LIMIT}
    ), conversations AS (
      -- A 1:1 conversation is its other party, whoever sent; a group one is its recipient.
      SELECT CASE WHEN type = ${RECIPIENT_PERSONAL} THEN CASE WHEN type_id = ${userId} THEN sender_id ELSE type_id END END AS other,
             CASE WHEN type = ${RECIPIENT_PERSONAL} THEN NULL ELSE recipient_id END AS huddle_recipient_id,
             max(message_id) AS max_message_id
      FROM recent
      GROUP BY 1, 2
    )
    SELECT c.max_message_id,
           CASE WHEN c.huddle_recipient_id IS NULL THEN
                  CASE WHEN c.other = ${userId} THEN ARRAY[]::int[] ELSE ARRAY[c.other] END
                ELSE coalesce((SELECT array_agg(s.user_id ORDER BY s.user_id) FROM subscription s
                               WHERE s.recipient_id = c.huddle_recipient_id AND s.user_id <> ${userId}), ARRAY[]::int[])
           END AS user_ids
    FROM conversations c
    ORDER BY c.max_message_id DESC`;
  return rows.map((row) => ({ max_message_id: row.max_message_id, user_ids: row.user_ids }));
}

function listOf(state: State): Conversation[] | undefined {
  return state[KEY] as Conversation[] | undefined;
}

const sameUsers = (a: number[], b: number[]) => a.length === b.length && a.every((id, i) => id === b[i]);

interface PrivateMessage {
  id: number;
  type: string;
  display_recipient: Array<{ id: number }> | string;
}

export const RECENT_CONVERSATION_APPLIERS = {
  message(state: State, event: Record<string, unknown>, userId: number): void {
    const list = listOf(state);
    const message = event.message as PrivateMessage;
    if (!list || message.type !== "private" || !Array.isArray(message.display_recipient)) return;
    const others = message.display_recipient.map((r) => r.id).filter((id) => id !== userId).sort((a, b) => a - b);
    const index = list.findIndex((c) => sameUsers(c.user_ids, others));
    const conversation = index === -1 ? { max_message_id: message.id, user_ids: others } : list.splice(index, 1)[0];
    conversation.max_message_id = Math.max(conversation.max_message_id, message.id);
    // Newest first: the conversation goes before the first one with an older newest message.
    const at = list.findIndex((c) => c.max_message_id < conversation.max_message_id);
    list.splice(at === -1 ? list.length : at, 0, conversation);
  },

  // Deleting a conversation's newest message leaves its new newest unknown here: read it again.
  delete_message(state: State, event: Record<string, unknown>): void {
    const list = listOf(state);
    if (!list || event.message_type !== "private") return;
    const deleted = new Set(Array.isArray(event.message_ids) ? (event.message_ids as number[]) : [event.message_id as number]);
    for (const conversation of list) {
      if (deleted.has(conversation.max_message_id)) markStale(state, "recent_private_conversations");
    }
  },
};

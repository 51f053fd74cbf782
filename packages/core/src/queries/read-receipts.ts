// Who has read a message (Zulip's read_receipts view, feature level 137). Not listed: the sender,
// who read it by writing it; deactivated users; users who turned off send_read_receipts. Bots are
// listed like anyone (one that marks messages read says so on purpose). A message marked unread
// again reads as unread here too.
import { Prisma, type Tx } from "@chat/db";
import { JsonableError } from "../errors.ts";
import { FLAG_BITS } from "../lib/message-flags.ts";
import type { Actor } from "../models.ts";
import { accessMessage } from "./messages.ts";

/** GET /messages/{message_id}/read_receipts: the ids of the users who have read it, ascending. */
export async function messageReadReceipts(tx: Tx, actor: Actor, messageId: number): Promise<number[]> {
  const message = await accessMessage(tx, actor, messageId);
  if (!actor.realm.enable_read_receipts) throw new JsonableError("Read receipts are disabled in this organization.");
  const rows = await tx.$queryRaw<Array<{ user_id: number }>>(Prisma.sql`
    SELECT um.user_id
    FROM user_message um
    JOIN user_profile u ON u.id = um.user_id
    WHERE um.message_id = ${message.id}
      AND (um.flags & ${FLAG_BITS.read}) <> 0
      AND um.user_id <> ${message.sender_id}
      AND u.is_active
      AND u.send_read_receipts
    ORDER BY um.user_id`);
  return rows.map((row) => row.user_id);
}

// Typing notifications (Zulip's check_send_typing_notification): nothing is stored; the event goes
// through the outbox like any other so every event node delivers it.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Actor, UserProfile } from "../models.ts";
import { usersByEmail } from "../queries/users.ts";
import type { PrivateRecipients } from "./messages.ts";

export const TYPING_OPS = ["start", "stop"] as const;

/** The conversation's participants as the client named them, the sender last if not named. */
async function typingRecipients(tx: Tx, sender: Actor, to: PrivateRecipients): Promise<UserProfile[]> {
  if (typeof to[0] === "number") {
    const ids = [...new Set(to as number[])];
    if (!ids.includes(sender.id)) ids.push(sender.id);
    const users = await tx.userProfile.findMany({ where: { id: { in: ids }, realm_id: sender.realm_id } });
    const byId = new Map(users.map((u) => [u.id, u]));
    const missing = ids.find((id) => !byId.has(id));
    if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
    return ids.map((id) => byId.get(id)!);
  }
  // Old clients (before Zulip 2.0) name recipients by email.
  const emails = [...new Set((to as string[]).map((e) => e.trim().toLowerCase()))];
  // By the address the sender was shown (lib/email-visibility.ts), or a real one they may see.
  const byEmail = await usersByEmail(tx, sender, emails);
  const missing = emails.find((e) => !byEmail.has(e));
  if (missing !== undefined) throw badRequest(`Invalid email '${missing}'`);
  const list = [...new Set(emails.map((e) => byEmail.get(e)!))];
  return list.some((u) => u.id === sender.id) ? list : [...list, sender];
}

/** POST /typing: `typing` start or stop to every active participant, the sender included. */
export async function sendTypingNotification(tx: Tx, events: EventRecorder, sender: Actor, to: PrivateRecipients, op: string): Promise<void> {
  if (to.length === 0) throw badRequest("Missing parameter: 'to' (recipient)");
  if (!(TYPING_OPS as readonly string[]).includes(op)) throw badRequest("Invalid 'op' value (should be start or stop)");
  const recipients = await typingRecipients(tx, sender, to);
  events.send(
    {
      type: "typing",
      op,
      sender: { user_id: sender.id, email: sender.email },
      recipients: recipients.map((u) => ({ user_id: u.id, email: u.email })),
    },
    recipients.filter((u) => u.is_active).map((u) => u.id),
  );
}

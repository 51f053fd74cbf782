// Messages the server itself writes (new stream announcements, "you were subscribed" notes), sent
// by the realm's Notification Bot (system-bots.ts).
import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import type { Realm } from "../models.ts";
import { sendMessage, type MessageDestination } from "./messages.ts";
import { systemBot } from "./system-bots.ts";

/** Sends a message from the realm's Notification Bot, within the caller's transaction; returns its id. */
export async function sendNotification(tx: Tx, events: EventRecorder, ctx: ServerContext, realm: Realm, destination: MessageDestination, content: string): Promise<number> {
  const bot = await systemBot(tx, events, ctx, realm, "notification");
  // The bot may post anywhere the server needs it to, whatever the stream's posting policy.
  return (await sendMessage(tx, events, { ...bot, realm, role: 200 }, { destination, content, client: "Internal" })).id;
}

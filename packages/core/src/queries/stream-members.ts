// GET /streams/{stream_id}/members (Zulip's get_subscribers_backend, feature level 79): the
// active subscribers of a stream the user may see, as user ids. Who may ask is access_stream_by_id
// with allow_realm_admin: anyone for a web-public stream, non-guests for a public one, subscribers
// (and administrators) for a private one; else "Invalid stream id".
import type { PrismaClient } from "@chat/db";
import type { Actor } from "../models.ts";
import { accessStreamById } from "./streams.ts";
import { subscribersByRecipient } from "./subscriptions.ts";

export async function streamSubscriberIds(prisma: PrismaClient, actor: Actor, streamId: number): Promise<number[]> {
  const stream = await accessStreamById(prisma, actor, streamId);
  const byRecipient = await subscribersByRecipient(prisma, [stream.recipient_id!], "ids");
  return (byRecipient.get(stream.recipient_id!) as number[] | undefined) ?? [];
}

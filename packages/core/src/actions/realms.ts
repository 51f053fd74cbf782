import type { Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import type { EventRecorder } from "../events.ts";
import { badRequest } from "../errors.ts";
import type { Realm, UserProfile } from "../models.ts";
import { ROLE_OWNER } from "../lib/roles.ts";
import { renderMarkdown } from "../lib/markdown.ts";
import { createStream } from "./streams.ts";
import { ensureSystemBots } from "./system-bots.ts";
import { createSystemGroups } from "./system-groups.ts";
import { createUser, type NewUser } from "./users.ts";

export const DEFAULT_STREAM_NAME = "general";

export function checkSubdomain(raw: string): string {
  const subdomain = raw.trim().toLowerCase();
  if (subdomain !== "" && !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(subdomain)) {
    throw badRequest("Subdomain can only have lowercase letters, numbers, and '-'s, and must not start or end with '-'.");
  }
  return subdomain;
}

const DEFAULT_STREAM_DESCRIPTION = "Everyone is added to this stream by default. Welcome! :octopus:";

/**
 * Creates an organization: the realm, its default stream `general` (every new user joins it),
 * its owner, and the server's bots.
 */
export async function createRealm(
  tx: Tx,
  events: EventRecorder,
  ctx: ServerContext,
  options: { subdomain: string; name: string; owner: NewUser },
): Promise<{ realm: Realm; owner: UserProfile }> {
  const subdomain = checkSubdomain(options.subdomain);
  const name = options.name.trim();
  if (name === "" || name.length > 40) throw badRequest("Organization name must be 1 to 40 characters.");
  if (await tx.realm.findUnique({ where: { string_id: subdomain } })) throw badRequest(`Subdomain '${subdomain}' is already in use`);
  // The system groups first: the realm's group settings name them, and every user joins one.
  const realm = await createSystemGroups(tx, await tx.realm.create({ data: { string_id: subdomain, name } }));
  const general = await createStream(tx, events, realm.id, {
    name: DEFAULT_STREAM_NAME,
    description: DEFAULT_STREAM_DESCRIPTION,
    renderedDescription: renderMarkdown(DEFAULT_STREAM_DESCRIPTION).html,
  });
  await tx.defaultStream.create({ data: { realm_id: realm.id, stream_id: general.id } });
  const withStreams = await tx.realm.update({
    where: { id: realm.id },
    data: { notifications_stream_id: general.id, signup_notifications_stream_id: general.id },
  });
  // The organization's first owner may create accounts (POST /users), as the operator who made it.
  const created = await createUser(tx, events, ctx, withStreams, { ...options.owner, role: ROLE_OWNER });
  const owner = await tx.userProfile.update({ where: { id: created.id }, data: { can_create_users: true } });
  await ensureSystemBots(tx, events, ctx, withStreams);
  return { realm: withStreams, owner };
}

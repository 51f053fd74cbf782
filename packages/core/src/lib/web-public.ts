// Web-public streams and the organization's spectators (Zulip's feature levels 98, 109, 110, 116):
// whether the server allows them, who may make a stream web-public, and whether people who are not
// logged in may read an organization's web-public streams.
import { Prisma, type PrismaClient, type Tx } from "@chat/db";
import type { ServerContext } from "../context.ts";
import { JsonableError } from "../errors.ts";
import type { Actor, Realm } from "../models.ts";
import { canCreateWebPublicStreamsByGroup } from "./group-permissions.ts";

type Db = PrismaClient | Tx;

/** The server's WEB_PUBLIC_STREAMS_ENABLED (Zulip's Realm.web_public_streams_enabled, with no plans). */
export function webPublicStreamsEnabled(ctx: Pick<ServerContext, "webPublicStreamsEnabled">): boolean {
  return ctx.webPublicStreamsEnabled === true;
}

/**
 * Zulip's check before a stream becomes web-public (creation, or PATCH /streams), in its words:
 * the server allows web-public streams, and the actor is in the organization's
 * can_create_web_public_channel_group (owners by default; group-permissions.ts).
 */
export async function checkCanCreateWebPublicStreams(db: Pick<Tx, "$queryRaw">, actor: Actor, ctx: Pick<ServerContext, "webPublicStreamsEnabled">): Promise<void> {
  if (!webPublicStreamsEnabled(ctx)) throw new JsonableError("Web-public channels are not enabled.");
  if (!(await canCreateWebPublicStreamsByGroup(db, actor))) throw new JsonableError("Insufficient permission");
}

/**
 * The streams a spectator may read, as SQL on `stream` (Zulip's get_web_public_streams_queryset):
 * web-public, live, not private and with history public, whatever else a row says.
 */
export function webPublicStreamCondition(realmId: number, alias = "stream"): Prisma.Sql {
  const s = Prisma.raw(alias);
  return Prisma.sql`${s}.realm_id = ${realmId} AND ${s}.is_web_public AND NOT ${s}.deactivated AND NOT ${s}.invite_only AND ${s}.history_public_to_subscribers`;
}

/** Whether the organization has a stream spectators could read (Zulip's has_web_public_streams). */
export async function realmHasWebPublicStreams(db: Db, realmId: number): Promise<boolean> {
  const rows = await db.$queryRaw<{ found: boolean }[]>`SELECT EXISTS (SELECT 1 FROM stream WHERE ${webPublicStreamCondition(realmId)}) AS found`;
  return rows[0]?.found === true;
}

/**
 * Whether people who are not logged in may read the organization's web-public streams (Zulip's
 * allow_web_public_streams_access, /server_settings' realm_web_public_access_enabled): the server
 * allows web-public streams, the organization lets spectators in, and it has such a stream.
 */
export async function spectatorsAllowed(db: Db, realm: Pick<Realm, "id" | "deactivated" | "enable_spectator_access">, ctx: Pick<ServerContext, "webPublicStreamsEnabled">): Promise<boolean> {
  if (!webPublicStreamsEnabled(ctx) || realm.deactivated || !realm.enable_spectator_access) return false;
  return realmHasWebPublicStreams(db, realm.id);
}

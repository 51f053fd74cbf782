// A realm's custom emoji (Zulip 3.x's upload_emoji, check_add_realm_emoji and
// do_remove_realm_emoji). Adding one writes its image to storage first, then the row in a
// transaction; removing one deactivates it, so messages and reactions that use it keep rendering
// (its files stay).
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { badRequest, JsonableError } from "../errors.ts";
import { checkMemberOrAdmin } from "../lib/human-users.ts";
import type { Actor } from "../models.ts";
import { customEmojiStorageKey } from "../lib/avatars.ts";
import { resizeEmoji } from "../lib/images.ts";
import { isAdmin } from "../lib/roles.ts";
import { canAddCustomEmoji } from "../lib/group-permissions.ts";
import { getRealmEmojiDicts } from "../queries/realm-emoji.ts";
import { activeUserIds } from "../queries/users.ts";
import { deleteFilesQuietly, type FileActionServices } from "../lib/stored-files.ts";

/** Serialises adding emoji in one realm (pg_advisory_xact_lock's first key), so a name is added once. */
const EMOJI_NAME_LOCK = 72011004;

/** The realm's emoji, sent whole to everyone on any change (Zulip's notify_realm_emoji). */
export async function notifyRealmEmoji(tx: Tx, events: EventRecorder, realmId: number): Promise<void> {
  events.send({ type: "realm_emoji", op: "update", realm_emoji: await getRealmEmojiDicts(tx, realmId) }, await activeUserIds(tx, realmId));
}

/** Longer than any of the emoji names clients know (those run to about 40). */
export const MAX_EMOJI_NAME_LENGTH = 50;

/**
 * The name a client gave, as Zulip 3.x takes it: trimmed, spaces as underscores; then lowercase
 * letters, digits, '.', '-' and '_', ending with a letter or digit (check_valid_emoji_name).
 */
export function checkEmojiName(raw: string): string {
  const name = raw.trim().replaceAll(" ", "_");
  if (name === "") throw badRequest("Emoji name is missing");
  // Every client gets every emoji's name (realm_emoji), and a path segment could carry 16 KiB.
  if (name.length > MAX_EMOJI_NAME_LENGTH) throw badRequest("Emoji name is too long");
  if (!/^[0-9a-z.\-_]*[0-9a-z]$/.test(name)) throw badRequest("Invalid characters in emoji name");
  return name;
}

async function checkNameFree(db: Pick<Tx, "realmEmoji">, realmId: number, name: string): Promise<void> {
  const existing = await db.realmEmoji.findFirst({ where: { realm_id: realmId, name, deactivated: false }, select: { id: true } });
  if (existing) throw badRequest("A custom emoji with this name already exists.");
}

/**
 * Everything POST /realm/emoji/{name} checks before it reads the image, in Zulip's order: no
 * guests or bots (require_member_or_admin), the name, the realm's add_custom_emoji_policy
 * (Zulip 9.0's can_add_custom_emoji), a free name. Returns the name as it will be stored.
 */
export async function checkAddRealmEmoji(db: Pick<Tx, "realmEmoji" | "$queryRaw">, actor: Actor, rawName: string): Promise<string> {
  checkMemberOrAdmin(actor);
  const name = checkEmojiName(rawName);
  // The realm's can_add_custom_emoji_group (feature level 307).
  if (!(await canAddCustomEmoji(db, actor))) throw badRequest("Insufficient permission");
  await checkNameFree(db, actor.realm_id, name);
  return name;
}

export interface StoredEmojiImage {
  id: number;
  file_name: string;
  content_type: string;
}

/** The row for an emoji whose image is stored; the name checked again under the realm's lock. */
export async function addRealmEmoji(tx: Tx, events: EventRecorder, actor: Actor, name: string, image: StoredEmojiImage): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${EMOJI_NAME_LOCK}::int, ${actor.realm_id}::int)`;
  await checkNameFree(tx, actor.realm_id, name);
  await tx.realmEmoji.create({
    data: { id: image.id, realm_id: actor.realm_id, name, author_id: actor.id, file_name: image.file_name, content_type: image.content_type },
  });
  await notifyRealmEmoji(tx, events, actor.realm_id);
}

/**
 * POST /realm/emoji/{name} once the image is read: resized (an animation stays a GIF), stored as
 * `<id>.<png|gif>` with its original beside it, then the row and the `realm_emoji` event. The id
 * is drawn first so the file can carry it; if the row does not commit, the files are removed.
 */
export async function uploadRealmEmoji(services: FileActionServices, actor: Actor, name: string, upload: Buffer, requestId?: string): Promise<void> {
  const image = await resizeEmoji(upload, `${actor.realm_id}:${actor.id}`);
  const [{ id }] = await services.prisma.$queryRaw<Array<{ id: number }>>`SELECT nextval(pg_get_serial_sequence('realm_emoji', 'id'))::int AS id`;
  const fileName = `${id}.${image.extension}`;
  const key = customEmojiStorageKey(actor.realm_id, fileName);
  const keys = [key, `${key}.original`];
  try {
    await Promise.all([
      services.storage.put(keys[1], image.original.data, { contentType: image.original.contentType }),
      services.storage.put(key, image.data, { contentType: image.contentType }),
    ]);
    await services.actions.run({ realmId: actor.realm_id, requestId }, (tx, events) => addRealmEmoji(tx, events, actor, name, { id, file_name: fileName, content_type: image.contentType }));
  } catch (error) {
    await deleteFilesQuietly(services.storage, keys);
    throw error;
  }
}

/** DELETE /realm/emoji/{name}: an administrator, or the member who added it, deactivates it. */
export async function removeRealmEmoji(tx: Tx, events: EventRecorder, actor: Actor, name: string): Promise<void> {
  // A name Postgres cannot hold (NUL) names no emoji.
  const emoji = name.includes("\0") ? null : await tx.realmEmoji.findFirst({ where: { realm_id: actor.realm_id, name, deactivated: false } });
  if (!emoji) throw new JsonableError(`Emoji '${name}' does not exist`, { status: 404 });
  // Zulip 9.0's check_remove_custom_emoji: an administrator or the author, whatever the policy for adding.
  if (!isAdmin(actor) && emoji.author_id !== actor.id) throw badRequest("Must be an organization administrator or emoji author");
  await tx.realmEmoji.update({ where: { id: emoji.id }, data: { deactivated: true } });
  await notifyRealmEmoji(tx, events, actor.realm_id);
}

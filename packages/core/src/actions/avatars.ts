// Uploaded avatars (Zulip's set_avatar_backend and upload_avatar_image): the image is resized,
// its files written to storage, and only then does the user's avatar source change, in a
// transaction of its own. Storage cannot join a transaction, so each side undoes what the other
// could not finish: files written for a change that did not commit are removed.
import type { FileStorage } from "@chat/storage";
import type { Actor, UserProfile } from "../models.ts";
import { avatarStorageKeys } from "../lib/avatars.ts";
import { resizeAvatar, type AvatarImages } from "../lib/images.ts";
import { deleteFilesQuietly, type FileActionServices } from "../lib/stored-files.ts";
import { changeAvatarSource, checkAvatarChangesAllowed } from "./user-changes.ts";

type AvatarKeys = ReturnType<typeof avatarStorageKeys>;

/** Writes an avatar's three files (Zulip's upload_avatar_image); the keys are the user's. */
export async function storeAvatarImages(storage: FileStorage, keys: AvatarKeys, images: AvatarImages): Promise<void> {
  await Promise.all([
    storage.put(keys.original, images.original.data, { contentType: images.original.contentType }),
    storage.put(keys.medium, images.medium, { contentType: "image/png" }),
    storage.put(keys.small, images.small, { contentType: "image/png" }),
  ]);
}

/**
 * Writes a user's avatar files, then runs `change` (the transaction that makes them the avatar);
 * if it fails, files that were not the avatar before are removed. `hadUpload`: the user's
 * avatar was an upload, whose files these overwrite and so must not remove.
 */
export async function withAvatarFiles<T>(storage: FileStorage, realmId: number, userId: number, hadUpload: boolean, images: AvatarImages, change: () => Promise<T>): Promise<T> {
  const keys = avatarStorageKeys(realmId, userId);
  try {
    await storeAvatarImages(storage, keys, images);
    return await change();
  } catch (error) {
    if (!hadUpload) await deleteFilesQuietly(storage, Object.values(keys));
    throw error;
  }
}

/**
 * POST /users/me/avatar once the file is read: 100 and 500 pixel PNGs and the original go to
 * storage, then the user's avatar becomes `U` with a new version, which every client hears of
 * (`realm_user update`). The keys are the user's, so a new upload replaces the old files.
 */
export async function uploadAvatar(services: FileActionServices, actor: Actor, upload: Buffer, requestId?: string): Promise<UserProfile> {
  checkAvatarChangesAllowed(actor);
  const images = await resizeAvatar(upload, `${actor.realm_id}:${actor.id}`);
  // Files of an earlier upload are the user's current avatar until the change commits; they are
  // overwritten, and removed only if they were not the avatar before.
  return withAvatarFiles(services.storage, actor.realm_id, actor.id, actor.avatar_source === "U", images, () =>
    services.actions.run({ realmId: actor.realm_id, requestId }, (tx, events) => changeAvatarSource(tx, events, actor, actor, "U")),
  );
}

/**
 * DELETE /users/me/avatar: back to the gravatar; the uploaded files go once that committed. A
 * failure to delete them is logged, not answered: the change is made, and the files are unused.
 */
export async function deleteAvatar(services: FileActionServices, actor: Actor, requestId?: string): Promise<UserProfile> {
  const user = await services.actions.run({ realmId: actor.realm_id, requestId }, (tx, events) => changeAvatarSource(tx, events, actor, actor, "G"));
  await deleteFilesQuietly(services.storage, Object.values(avatarStorageKeys(actor.realm_id, actor.id)));
  return user;
}

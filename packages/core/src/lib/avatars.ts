import { createHash } from "node:crypto";

export interface AvatarSource {
  id: number;
  realm_id: number;
  email: string;
  avatar_source: string;
  avatar_version: number;
}

// Email to gravatar hash: every message of a fetch carries its sender's avatar URL, and a page
// holds few distinct senders. Bounded by clearing, which only costs recomputation.
const gravatarHashes = new Map<string, string>();
const GRAVATAR_CACHE_SIZE = 10_000;

function gravatarHash(email: string): string {
  let hash = gravatarHashes.get(email);
  if (hash === undefined) {
    if (gravatarHashes.size >= GRAVATAR_CACHE_SIZE) gravatarHashes.clear();
    hash = createHash("md5").update(email.toLowerCase()).digest("hex");
    gravatarHashes.set(email, hash);
  }
  return hash;
}

/** Gravatar for `G`, our upload path for `U`; null for gravatar users when the client computes it. */
export function avatarUrl(user: AvatarSource, clientGravatar: boolean, medium = false): string | null {
  if (user.avatar_source === "U") {
    return `/user_avatars/${user.realm_id}/${user.id}${medium ? "-medium" : ""}.png?version=${user.avatar_version}`;
  }
  if (clientGravatar) return null;
  return `https://secure.gravatar.com/avatar/${gravatarHash(user.email)}?d=identicon${medium ? "&s=500" : ""}&version=${user.avatar_version}`;
}

/**
 * Where a user's uploaded avatar lives in storage (Zulip's user_avatar_path, by id rather than a
 * salted hash): served at /user_avatars/<realm>/<user>.png and -medium.png; the original is kept
 * beside them, never served.
 */
export function avatarStorageKeys(realmId: number, userId: number): { small: string; medium: string; original: string } {
  const base = `avatars/${realmId}/${userId}`;
  return { small: `${base}.png`, medium: `${base}-medium.png`, original: `${base}.original` };
}

/** Where a custom emoji's image lives (Zulip's RealmEmoji.PATH_ID_TEMPLATE under avatars/); its original is `<key>.original`. */
export function customEmojiStorageKey(realmId: number, fileName: string): string {
  return `avatars/${realmId}/emoji/images/${fileName}`;
}

/** The organization's icon (Zulip's get_realm_icon_url): uploaded, else a gravatar identicon of its subdomain. */
export function realmIconUrl(realm: { id: number; string_id: string; icon_source: string }): string {
  if (realm.icon_source === "U") return `/user_avatars/${realm.id}/realm/icon.png`;
  return `https://secure.gravatar.com/avatar/${gravatarHash(realm.string_id)}?d=identicon`;
}

/** A `realm_user update` person announcing a user's avatar as it now is. */
export function avatarChangePerson(user: AvatarSource) {
  return {
    user_id: user.id,
    avatar_source: user.avatar_source,
    avatar_url: avatarUrl(user, false),
    avatar_url_medium: avatarUrl(user, false, true),
    avatar_version: user.avatar_version,
  };
}

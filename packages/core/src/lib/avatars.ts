import { createHash } from "node:crypto";

export interface AvatarSource {
  id: number;
  realm_id: number;
  email: string;
  avatar_source: string;
  avatar_version: number;
}

/** Gravatar for `G`, our upload path for `U`; null for gravatar users when the client computes it. */
export function avatarUrl(user: AvatarSource, clientGravatar: boolean, medium = false): string | null {
  if (user.avatar_source === "U") {
    return `/user_avatars/${user.realm_id}/${user.id}${medium ? "-medium" : ""}.png?version=${user.avatar_version}`;
  }
  if (clientGravatar) return null;
  const hash = createHash("md5").update(user.email.toLowerCase()).digest("hex");
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon${medium ? "&s=500" : ""}&version=${user.avatar_version}`;
}

import type { UserProfile } from "../models.ts";
import { avatarUrl } from "./avatars.ts";
import { ROLE_ADMINISTRATOR, ROLE_GUEST, ROLE_OWNER } from "./roles.ts";

export type ProfileData = Record<string, { value: string; rendered_value?: string | null }>;

export interface UserFormatOptions {
  clientGravatar: boolean;
  /** Administrators also see delivery_email. */
  forAdmin: boolean;
  profileData?: ProfileData;
}

/** The User object of the contract (Zulip's format_user_row). */
export function formatUser(user: UserProfile, options: UserFormatOptions): Record<string, unknown> {
  const result: Record<string, unknown> = {
    user_id: user.id,
    email: user.email,
    full_name: user.full_name,
    is_active: user.is_active,
    is_admin: user.role === ROLE_ADMINISTRATOR || user.role === ROLE_OWNER,
    is_owner: user.role === ROLE_OWNER,
    is_guest: user.role === ROLE_GUEST,
    is_bot: user.is_bot,
    role: user.role,
    timezone: user.timezone,
    date_joined: user.date_joined.toISOString(),
    avatar_url: avatarUrl(user, options.clientGravatar),
    avatar_version: user.avatar_version,
    avatar_source: user.avatar_source,
  };
  if (user.is_bot) {
    result.bot_type = user.bot_type;
    result.bot_owner_id = user.bot_owner_id;
  }
  if (options.forAdmin) result.delivery_email = user.delivery_email;
  if (options.profileData && !user.is_bot) result.profile_data = options.profileData;
  return result;
}

import type { UserProfile } from "../models.ts";
import { avatarUrl } from "./avatars.ts";
import type { BotExtras } from "./bots.ts";
import { deliveryEmailFor, type DeliveryEmailView } from "./email-visibility.ts";
import { ROLE_ADMINISTRATOR, ROLE_GUEST, ROLE_OWNER } from "./roles.ts";

export type ProfileData = Record<string, { value: string; rendered_value?: string | null }>;

export interface UserFormatOptions {
  clientGravatar: boolean;
  /**
   * Whether the viewer is sent delivery_email: for every user shown, or, given the viewer's role
   * and kind of client, by each user's own email_address_visibility (lib/email-visibility.ts).
   */
  withDeliveryEmail: boolean | DeliveryEmailView;
  /** delivery_email on every user, null where withDeliveryEmail is false (feature level 163; 3.x left it out). */
  allDeliveryEmails?: boolean;
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
  if (typeof options.withDeliveryEmail === "object") {
    const shown = deliveryEmailFor(options.withDeliveryEmail, user);
    if (shown !== undefined) result.delivery_email = shown;
  } else if (options.withDeliveryEmail) result.delivery_email = user.delivery_email;
  else if (options.allDeliveryEmails) result.delivery_email = null;
  if (options.profileData && !user.is_bot) result.profile_data = options.profileData;
  return result;
}

/**
 * A bot as `realm_bots` and `realm_bot add` show it to those who administer it (Zulip's
 * get_owned_bot_dicts); queries/bots.ts reads the extras (services, default stream names).
 */
export function formatOwnedBot(bot: UserProfile, extras: BotExtras): Record<string, unknown> {
  return {
    email: bot.email,
    user_id: bot.id,
    full_name: bot.full_name,
    bot_type: bot.bot_type,
    is_active: bot.is_active,
    api_key: bot.api_key,
    default_sending_stream: extras.defaultSendingStream,
    default_events_register_stream: extras.defaultEventsRegisterStream,
    default_all_public_streams: bot.default_all_public_streams,
    owner_id: bot.bot_owner_id,
    avatar_url: avatarUrl(bot, false),
    services: extras.services,
  };
}

/** A bot as GET /bots lists it (Zulip's bot_info), with its id. */
export function formatBotInfo(bot: UserProfile, extras: BotExtras): Record<string, unknown> {
  return {
    user_id: bot.id,
    username: bot.email,
    full_name: bot.full_name,
    api_key: bot.api_key,
    avatar_url: avatarUrl(bot, false),
    default_sending_stream: extras.defaultSendingStream,
    default_events_register_stream: extras.defaultEventsRegisterStream,
    default_all_public_streams: bot.default_all_public_streams,
  };
}

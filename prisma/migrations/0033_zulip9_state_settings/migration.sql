-- Zulip 9.0's remaining organization state and settings.

-- The personal settings new users of an organization start with (Zulip's RealmUserDefault, feature
-- level 95): one row per realm, made when first changed; its absence means the defaults below.
-- Not here: default_language and twenty_four_hour_time (the realm's own settings), timezone, and
-- the settings Zulip does not let administrators choose (enable_login_emails, enable_marketing_emails).
CREATE TABLE "realm_user_default" (
  "realm_id" INTEGER NOT NULL PRIMARY KEY REFERENCES "realm"("id") ON DELETE CASCADE,
  "enable_stream_desktop_notifications" BOOLEAN NOT NULL DEFAULT false,
  "enable_stream_email_notifications" BOOLEAN NOT NULL DEFAULT false,
  "enable_stream_push_notifications" BOOLEAN NOT NULL DEFAULT false,
  "enable_stream_audible_notifications" BOOLEAN NOT NULL DEFAULT false,
  "wildcard_mentions_notify" BOOLEAN NOT NULL DEFAULT true,
  "notification_sound" TEXT NOT NULL DEFAULT 'zulip',
  "enable_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
  "enable_sounds" BOOLEAN NOT NULL DEFAULT true,
  "enable_offline_email_notifications" BOOLEAN NOT NULL DEFAULT true,
  "enable_offline_push_notifications" BOOLEAN NOT NULL DEFAULT true,
  "enable_online_push_notifications" BOOLEAN NOT NULL DEFAULT true,
  "enable_digest_emails" BOOLEAN NOT NULL DEFAULT true,
  "message_content_in_email_notifications" BOOLEAN NOT NULL DEFAULT true,
  "pm_content_in_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
  "desktop_icon_count_display" INTEGER NOT NULL DEFAULT 1,
  "realm_name_in_email_notifications_policy" INTEGER NOT NULL DEFAULT 1,
  "presence_enabled" BOOLEAN NOT NULL DEFAULT true,
  "dense_mode" BOOLEAN NOT NULL DEFAULT true,
  "starred_message_counts" BOOLEAN NOT NULL DEFAULT false,
  "fluid_layout_width" BOOLEAN NOT NULL DEFAULT false,
  "high_contrast_mode" BOOLEAN NOT NULL DEFAULT false,
  "color_scheme" INTEGER NOT NULL DEFAULT 1,
  "translate_emoticons" BOOLEAN NOT NULL DEFAULT false,
  "default_view" TEXT NOT NULL DEFAULT 'recent_topics',
  "left_side_userlist" BOOLEAN NOT NULL DEFAULT false,
  "emojiset" TEXT NOT NULL DEFAULT 'google-blob',
  "demote_inactive_streams" INTEGER NOT NULL DEFAULT 1,
  "enter_sends" BOOLEAN NOT NULL DEFAULT false,
  "enable_drafts_synchronization" BOOLEAN NOT NULL DEFAULT true,
  "display_emoji_reaction_users" BOOLEAN NOT NULL DEFAULT true,
  "web_escape_navigates_to_home_view" BOOLEAN NOT NULL DEFAULT true,
  "web_font_size_px" INTEGER NOT NULL DEFAULT 16,
  "web_line_height_percent" INTEGER NOT NULL DEFAULT 140,
  "web_animate_image_previews" TEXT NOT NULL DEFAULT 'on_hover',
  "web_mark_read_on_scroll_policy" INTEGER NOT NULL DEFAULT 1,
  "web_channel_default_view" INTEGER NOT NULL DEFAULT 1,
  "web_stream_unreads_count_display_policy" INTEGER NOT NULL DEFAULT 2,
  "web_navigate_to_sent_message" BOOLEAN NOT NULL DEFAULT true,
  "user_list_style" INTEGER NOT NULL DEFAULT 2,
  "email_notifications_batching_period_seconds" INTEGER NOT NULL DEFAULT 120,
  "enable_followed_topic_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
  "enable_followed_topic_email_notifications" BOOLEAN NOT NULL DEFAULT true,
  "enable_followed_topic_push_notifications" BOOLEAN NOT NULL DEFAULT true,
  "enable_followed_topic_audible_notifications" BOOLEAN NOT NULL DEFAULT true,
  "enable_followed_topic_wildcard_mentions_notify" BOOLEAN NOT NULL DEFAULT true,
  "automatically_follow_topics_policy" INTEGER NOT NULL DEFAULT 3,
  "automatically_unmute_topics_in_muted_streams_policy" INTEGER NOT NULL DEFAULT 2,
  "automatically_follow_topics_where_mentioned" BOOLEAN NOT NULL DEFAULT true,
  "send_stream_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
  "send_private_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
  "send_read_receipts" BOOLEAN NOT NULL DEFAULT true,
  "receives_typing_notifications" BOOLEAN NOT NULL DEFAULT true);

-- Onboarding steps a user has seen (feature levels 233 and 259's one-time notices).
CREATE TABLE "onboarding_step" (
  "id" SERIAL PRIMARY KEY,
  "user_id" INTEGER NOT NULL REFERENCES "user_profile"("id") ON DELETE CASCADE,
  "onboarding_step" TEXT NOT NULL,
  "timestamp" TIMESTAMPTZ(6) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX "onboarding_step_user_id_onboarding_step_key" ON "onboarding_step"("user_id", "onboarding_step");

-- Code playgrounds (feature levels 49 and 196): where a code block of a language can be opened.
CREATE TABLE "realm_playground" (
  "id" SERIAL PRIMARY KEY,
  "realm_id" INTEGER NOT NULL REFERENCES "realm"("id") ON DELETE CASCADE,
  "name" TEXT NOT NULL,
  "pygments_language" TEXT NOT NULL,
  "url_template" TEXT NOT NULL
);
CREATE UNIQUE INDEX "realm_playground_realm_id_pygments_language_name_key" ON "realm_playground"("realm_id", "pygments_language", "name");

-- Linkifiers as RFC 6570 URL templates (feature level 176), in an order administrators choose (202).
-- Existing ones get the template Zulip's own migration made of a format string.
ALTER TABLE "realm_filter" ADD COLUMN "url_template" TEXT NOT NULL DEFAULT '';
ALTER TABLE "realm_filter" ADD COLUMN "order" INTEGER NOT NULL DEFAULT 0;
UPDATE "realm_filter" SET "url_template" = replace(regexp_replace("url_format_string", '%\(([A-Za-z0-9_-]+)\)s', '{\1}', 'g'), '%%', '%'), "order" = "id";

-- Who created a stream (feature level 254), and its messages a week over the last four weeks
-- (199), null while it is younger than a week; a worker refreshes the count.
ALTER TABLE "stream" ADD COLUMN "creator_id" INTEGER REFERENCES "user_profile"("id") ON DELETE SET NULL;
ALTER TABLE "stream" ADD COLUMN "stream_weekly_traffic" INTEGER;

-- Custom profile fields: required (feature level 244) and shown in the profile summary (146).
ALTER TABLE "custom_profile_field" ADD COLUMN "required" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "custom_profile_field" ADD COLUMN "display_in_profile_summary" BOOLEAN NOT NULL DEFAULT false;

-- A user status's emoji (feature level 86): a Unicode, custom or Zulip emoji; no name is none.
ALTER TABLE "user_status" ADD COLUMN "emoji_name" TEXT NOT NULL DEFAULT '';
ALTER TABLE "user_status" ADD COLUMN "emoji_code" TEXT NOT NULL DEFAULT '';
ALTER TABLE "user_status" ADD COLUMN "reaction_type" TEXT NOT NULL DEFAULT 'unicode_emoji';

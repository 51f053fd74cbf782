-- The personal settings of Zulip 9.0 (feature levels 89 to 277) this server did not store, with
-- Zulip's defaults for a new account.
ALTER TABLE "user_profile"
    ADD COLUMN "web_escape_navigates_to_home_view" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "display_emoji_reaction_users" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "web_font_size_px" INTEGER NOT NULL DEFAULT 16,
    ADD COLUMN "web_line_height_percent" INTEGER NOT NULL DEFAULT 140,
    ADD COLUMN "web_animate_image_previews" TEXT NOT NULL DEFAULT 'on_hover',
    ADD COLUMN "web_mark_read_on_scroll_policy" INTEGER NOT NULL DEFAULT 1,
    ADD COLUMN "web_channel_default_view" INTEGER NOT NULL DEFAULT 1,
    ADD COLUMN "user_list_style" INTEGER NOT NULL DEFAULT 2,
    ADD COLUMN "web_stream_unreads_count_display_policy" INTEGER NOT NULL DEFAULT 2,
    ADD COLUMN "web_navigate_to_sent_message" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "enable_drafts_synchronization" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "email_notifications_batching_period_seconds" INTEGER NOT NULL DEFAULT 120,
    ADD COLUMN "enable_marketing_emails" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "realm_name_in_email_notifications_policy" INTEGER NOT NULL DEFAULT 1,
    ADD COLUMN "enable_followed_topic_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "enable_followed_topic_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "enable_followed_topic_push_notifications" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "enable_followed_topic_audible_notifications" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "enable_followed_topic_wildcard_mentions_notify" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "automatically_follow_topics_policy" INTEGER NOT NULL DEFAULT 3,
    ADD COLUMN "automatically_unmute_topics_in_muted_streams_policy" INTEGER NOT NULL DEFAULT 2,
    ADD COLUMN "automatically_follow_topics_where_mentioned" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "send_stream_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "send_private_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "send_read_receipts" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "receives_typing_notifications" BOOLEAN NOT NULL DEFAULT true;

-- Zulip 7.0 replaced the boolean realm_name_in_notifications with a policy: true is "always" (2),
-- false "automatic" (1).
UPDATE "user_profile" SET "realm_name_in_email_notifications_policy" = 2 WHERE "realm_name_in_notifications";
ALTER TABLE "user_profile" DROP COLUMN "realm_name_in_notifications";

-- Zulip 8.0 numbers desktop_icon_count_display 1 all unreads, 2 DMs, mentions and followed topics,
-- 3 DMs and mentions, 4 none; 3.x's 2 (DMs and mentions) and 3 (none) move up one.
UPDATE "user_profile" SET "desktop_icon_count_display" = "desktop_icon_count_display" + 1 WHERE "desktop_icon_count_display" IN (2, 3);


-- CreateTable
CREATE TABLE "realm" (
    "id" SERIAL NOT NULL,
    "string_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "invite_required" BOOLEAN NOT NULL DEFAULT true,
    "emails_restricted_to_domains" BOOLEAN NOT NULL DEFAULT false,
    "disallow_disposable_email_addresses" BOOLEAN NOT NULL DEFAULT true,
    "create_stream_policy" INTEGER NOT NULL DEFAULT 1,
    "invite_to_stream_policy" INTEGER NOT NULL DEFAULT 1,
    "user_group_edit_policy" INTEGER NOT NULL DEFAULT 1,
    "private_message_policy" INTEGER NOT NULL DEFAULT 1,
    "wildcard_mention_policy" INTEGER NOT NULL DEFAULT 1,
    "bot_creation_policy" INTEGER NOT NULL DEFAULT 1,
    "email_address_visibility" INTEGER NOT NULL DEFAULT 1,
    "waiting_period_threshold" INTEGER NOT NULL DEFAULT 0,
    "allow_message_editing" BOOLEAN NOT NULL DEFAULT true,
    "allow_message_deleting" BOOLEAN NOT NULL DEFAULT false,
    "allow_community_topic_editing" BOOLEAN NOT NULL DEFAULT true,
    "allow_edit_history" BOOLEAN NOT NULL DEFAULT true,
    "message_content_edit_limit_seconds" INTEGER NOT NULL DEFAULT 600,
    "message_content_delete_limit_seconds" INTEGER,
    "mandatory_topics" BOOLEAN NOT NULL DEFAULT false,
    "name_changes_disabled" BOOLEAN NOT NULL DEFAULT false,
    "email_changes_disabled" BOOLEAN NOT NULL DEFAULT false,
    "avatar_changes_disabled" BOOLEAN NOT NULL DEFAULT false,
    "inline_image_preview" BOOLEAN NOT NULL DEFAULT true,
    "inline_url_embed_preview" BOOLEAN NOT NULL DEFAULT false,
    "send_welcome_emails" BOOLEAN NOT NULL DEFAULT true,
    "message_content_allowed_in_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "digest_emails_enabled" BOOLEAN NOT NULL DEFAULT false,
    "digest_weekday" INTEGER NOT NULL DEFAULT 1,
    "default_language" TEXT NOT NULL DEFAULT 'en',
    "default_twenty_four_hour_time" BOOLEAN NOT NULL DEFAULT false,
    "video_chat_provider" INTEGER NOT NULL DEFAULT 1,
    "message_retention_days" INTEGER,
    "upload_quota_bytes" BIGINT,
    "icon_source" TEXT NOT NULL DEFAULT 'G',
    "logo_source" TEXT NOT NULL DEFAULT 'D',
    "notifications_stream_id" INTEGER,
    "signup_notifications_stream_id" INTEGER,

    CONSTRAINT "realm_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "recipient" (
    "id" SERIAL NOT NULL,
    "type" INTEGER NOT NULL,
    "type_id" INTEGER NOT NULL,

    CONSTRAINT "recipient_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_profile" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "email" TEXT NOT NULL,
    "delivery_email" TEXT NOT NULL,
    "full_name" TEXT NOT NULL,
    "short_name" TEXT NOT NULL DEFAULT '',
    "password_hash" TEXT,
    "api_key" TEXT NOT NULL,
    "role" INTEGER NOT NULL DEFAULT 400,
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "is_bot" BOOLEAN NOT NULL DEFAULT false,
    "bot_type" INTEGER,
    "bot_owner_id" INTEGER,
    "is_mirror_dummy" BOOLEAN NOT NULL DEFAULT false,
    "avatar_source" TEXT NOT NULL DEFAULT 'G',
    "avatar_version" INTEGER NOT NULL DEFAULT 1,
    "timezone" TEXT NOT NULL DEFAULT '',
    "date_joined" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_login" TIMESTAMPTZ(6),
    "tos_version" TEXT,
    "recipient_id" INTEGER,
    "pointer" INTEGER NOT NULL DEFAULT -1,
    "long_term_idle" BOOLEAN NOT NULL DEFAULT false,
    "last_active_message_id" INTEGER,
    "default_language" TEXT NOT NULL DEFAULT 'en',
    "twenty_four_hour_time" BOOLEAN NOT NULL DEFAULT false,
    "left_side_userlist" BOOLEAN NOT NULL DEFAULT false,
    "emojiset" TEXT NOT NULL DEFAULT 'google-blob',
    "dense_mode" BOOLEAN NOT NULL DEFAULT true,
    "fluid_layout_width" BOOLEAN NOT NULL DEFAULT false,
    "high_contrast_mode" BOOLEAN NOT NULL DEFAULT false,
    "color_scheme" INTEGER NOT NULL DEFAULT 1,
    "translate_emoticons" BOOLEAN NOT NULL DEFAULT false,
    "starred_message_counts" BOOLEAN NOT NULL DEFAULT false,
    "demote_inactive_streams" INTEGER NOT NULL DEFAULT 1,
    "default_view" TEXT NOT NULL DEFAULT 'recent_topics',
    "enable_stream_desktop_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_email_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_push_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_audible_notifications" BOOLEAN NOT NULL DEFAULT false,
    "notification_sound" TEXT NOT NULL DEFAULT 'zulip',
    "wildcard_mentions_notify" BOOLEAN NOT NULL DEFAULT true,
    "enable_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
    "pm_content_in_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_sounds" BOOLEAN NOT NULL DEFAULT true,
    "enable_offline_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "message_content_in_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_offline_push_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_online_push_notifications" BOOLEAN NOT NULL DEFAULT true,
    "desktop_icon_count_display" INTEGER NOT NULL DEFAULT 1,
    "enable_digest_emails" BOOLEAN NOT NULL DEFAULT true,
    "enable_login_emails" BOOLEAN NOT NULL DEFAULT true,
    "realm_name_in_notifications" BOOLEAN NOT NULL DEFAULT false,
    "presence_enabled" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "user_profile_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "service" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "base_url" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "interface" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "service_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "stream" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "rendered_description" TEXT NOT NULL DEFAULT '',
    "invite_only" BOOLEAN NOT NULL DEFAULT false,
    "is_web_public" BOOLEAN NOT NULL DEFAULT false,
    "stream_post_policy" INTEGER NOT NULL DEFAULT 1,
    "history_public_to_subscribers" BOOLEAN NOT NULL DEFAULT true,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "first_message_id" INTEGER,
    "message_retention_days" INTEGER,
    "email_token" TEXT NOT NULL,
    "recipient_id" INTEGER,

    CONSTRAINT "stream_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "huddle" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "huddle_hash" TEXT NOT NULL,
    "recipient_id" INTEGER,

    CONSTRAINT "huddle_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscription" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "recipient_id" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "is_user_active" BOOLEAN NOT NULL DEFAULT true,
    "color" TEXT NOT NULL DEFAULT '#c2c2c2',
    "is_muted" BOOLEAN NOT NULL DEFAULT false,
    "pin_to_top" BOOLEAN NOT NULL DEFAULT false,
    "desktop_notifications" BOOLEAN,
    "audible_notifications" BOOLEAN,
    "push_notifications" BOOLEAN,
    "email_notifications" BOOLEAN,
    "wildcard_mentions_notify" BOOLEAN,

    CONSTRAINT "subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "message" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "recipient_id" INTEGER NOT NULL,
    "subject" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "rendered_content" TEXT,
    "rendered_content_version" INTEGER,
    "date_sent" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sending_client" TEXT NOT NULL DEFAULT 'API',
    "last_edit_time" TIMESTAMPTZ(6),
    "has_attachment" BOOLEAN NOT NULL DEFAULT false,
    "has_image" BOOLEAN NOT NULL DEFAULT false,
    "has_link" BOOLEAN NOT NULL DEFAULT false,
    "is_me_message" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_message" (
    "user_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "flags" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "user_message_pkey" PRIMARY KEY ("user_id","message_id")
);

-- CreateTable
CREATE TABLE "reaction" (
    "id" SERIAL NOT NULL,
    "message_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "emoji_name" TEXT NOT NULL,
    "emoji_code" TEXT NOT NULL,
    "reaction_type" TEXT NOT NULL DEFAULT 'unicode_emoji',

    CONSTRAINT "reaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "message_edit" (
    "id" SERIAL NOT NULL,
    "message_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "timestamp" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "prev_content" TEXT,
    "prev_rendered_content" TEXT,
    "prev_rendered_content_version" INTEGER,
    "prev_topic" TEXT,
    "prev_stream_id" INTEGER,

    CONSTRAINT "message_edit_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "submessage" (
    "id" SERIAL NOT NULL,
    "message_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "msg_type" TEXT NOT NULL,
    "content" TEXT NOT NULL,

    CONSTRAINT "submessage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attachment" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "owner_id" INTEGER NOT NULL,
    "file_name" TEXT NOT NULL,
    "path_id" TEXT NOT NULL,
    "content_type" TEXT,
    "size" INTEGER NOT NULL,
    "create_time" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "is_realm_public" BOOLEAN NOT NULL DEFAULT false,
    "content" BYTEA,

    CONSTRAINT "attachment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attachment_message" (
    "attachment_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,

    CONSTRAINT "attachment_message_pkey" PRIMARY KEY ("attachment_id","message_id")
);

-- CreateTable
CREATE TABLE "realm_emoji" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "author_id" INTEGER,
    "file_name" TEXT NOT NULL,
    "content_type" TEXT,
    "content" BYTEA,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "realm_emoji_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "realm_filter" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "pattern" TEXT NOT NULL,
    "url_format_string" TEXT NOT NULL,

    CONSTRAINT "realm_filter_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_group" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "is_system_group" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "user_group_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_group_membership" (
    "user_group_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,

    CONSTRAINT "user_group_membership_pkey" PRIMARY KEY ("user_group_id","user_id")
);

-- CreateTable
CREATE TABLE "muted_topic" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,
    "recipient_id" INTEGER NOT NULL,
    "topic_name" TEXT NOT NULL,
    "date_muted" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "muted_topic_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_presence" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "client_name" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "timestamp" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "user_presence_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_status" (
    "user_id" INTEGER NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "status" INTEGER NOT NULL DEFAULT 0,
    "status_text" TEXT NOT NULL DEFAULT '',
    "timestamp" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_status_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "alert_word" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "word" TEXT NOT NULL,

    CONSTRAINT "alert_word_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "custom_profile_field" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "hint" TEXT NOT NULL DEFAULT '',
    "type" INTEGER NOT NULL,
    "field_data" TEXT NOT NULL DEFAULT '',
    "order" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "custom_profile_field_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "custom_profile_field_value" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "field_id" INTEGER NOT NULL,
    "value" TEXT NOT NULL,
    "rendered_value" TEXT,

    CONSTRAINT "custom_profile_field_value_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "default_stream" (
    "realm_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,

    CONSTRAINT "default_stream_pkey" PRIMARY KEY ("realm_id","stream_id")
);

-- CreateTable
CREATE TABLE "default_stream_group" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',

    CONSTRAINT "default_stream_group_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "default_stream_group_stream" (
    "group_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,

    CONSTRAINT "default_stream_group_stream_pkey" PRIMARY KEY ("group_id","stream_id")
);

-- CreateTable
CREATE TABLE "user_hotspot" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "hotspot" TEXT NOT NULL,
    "timestamp" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "user_hotspot_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_outbox" (
    "id" BIGSERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "events" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_outbox_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "realm_string_id_key" ON "realm"("string_id");
CREATE UNIQUE INDEX "recipient_type_type_id_key" ON "recipient"("type", "type_id");
CREATE UNIQUE INDEX "user_profile_api_key_key" ON "user_profile"("api_key");
CREATE INDEX "user_profile_realm_id_is_active_idx" ON "user_profile"("realm_id", "is_active");
CREATE INDEX "service_user_id_idx" ON "service"("user_id");
CREATE INDEX "stream_realm_id_idx" ON "stream"("realm_id");
CREATE UNIQUE INDEX "huddle_huddle_hash_key" ON "huddle"("huddle_hash");
CREATE UNIQUE INDEX "subscription_user_id_recipient_id_key" ON "subscription"("user_id", "recipient_id");
CREATE INDEX "subscription_recipient_id_idx" ON "subscription"("recipient_id");
CREATE INDEX "message_recipient_id_id_idx" ON "message"("recipient_id", "id");
CREATE INDEX "message_sender_id_id_idx" ON "message"("sender_id", "id");
CREATE INDEX "message_realm_id_id_idx" ON "message"("realm_id", "id");
CREATE INDEX "user_message_message_id_idx" ON "user_message"("message_id");
CREATE UNIQUE INDEX "reaction_user_id_message_id_emoji_code_reaction_type_key" ON "reaction"("user_id", "message_id", "emoji_code", "reaction_type");
CREATE INDEX "reaction_message_id_idx" ON "reaction"("message_id");
CREATE INDEX "message_edit_message_id_id_idx" ON "message_edit"("message_id", "id");
CREATE INDEX "submessage_message_id_idx" ON "submessage"("message_id");
CREATE UNIQUE INDEX "attachment_path_id_key" ON "attachment"("path_id");
CREATE INDEX "attachment_owner_id_idx" ON "attachment"("owner_id");
CREATE INDEX "attachment_message_message_id_idx" ON "attachment_message"("message_id");
CREATE INDEX "realm_emoji_realm_id_idx" ON "realm_emoji"("realm_id");
CREATE UNIQUE INDEX "realm_filter_realm_id_pattern_key" ON "realm_filter"("realm_id", "pattern");
CREATE UNIQUE INDEX "user_group_realm_id_name_key" ON "user_group"("realm_id", "name");
CREATE INDEX "user_group_membership_user_id_idx" ON "user_group_membership"("user_id");
CREATE INDEX "muted_topic_user_id_stream_id_idx" ON "muted_topic"("user_id", "stream_id");
CREATE UNIQUE INDEX "user_presence_user_id_client_name_key" ON "user_presence"("user_id", "client_name");
CREATE INDEX "user_presence_realm_id_timestamp_idx" ON "user_presence"("realm_id", "timestamp");
CREATE INDEX "user_status_realm_id_idx" ON "user_status"("realm_id");
CREATE UNIQUE INDEX "alert_word_user_id_word_key" ON "alert_word"("user_id", "word");
CREATE UNIQUE INDEX "custom_profile_field_realm_id_name_key" ON "custom_profile_field"("realm_id", "name");
CREATE UNIQUE INDEX "custom_profile_field_value_user_id_field_id_key" ON "custom_profile_field_value"("user_id", "field_id");
CREATE UNIQUE INDEX "default_stream_group_realm_id_name_key" ON "default_stream_group"("realm_id", "name");
CREATE UNIQUE INDEX "user_hotspot_user_id_hotspot_key" ON "user_hotspot"("user_id", "hotspot");
CREATE INDEX "event_outbox_created_at_idx" ON "event_outbox"("created_at");

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_bot_owner_id_fkey" FOREIGN KEY ("bot_owner_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "service" ADD CONSTRAINT "service_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "stream" ADD CONSTRAINT "stream_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "huddle" ADD CONSTRAINT "huddle_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "subscription" ADD CONSTRAINT "subscription_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "subscription" ADD CONSTRAINT "subscription_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "message" ADD CONSTRAINT "message_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "message" ADD CONSTRAINT "message_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "message" ADD CONSTRAINT "message_recipient_id_fkey" FOREIGN KEY ("recipient_id") REFERENCES "recipient"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_message" ADD CONSTRAINT "user_message_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_message" ADD CONSTRAINT "user_message_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "reaction" ADD CONSTRAINT "reaction_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "reaction" ADD CONSTRAINT "reaction_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "message_edit" ADD CONSTRAINT "message_edit_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "message_edit" ADD CONSTRAINT "message_edit_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "submessage" ADD CONSTRAINT "submessage_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "submessage" ADD CONSTRAINT "submessage_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "attachment" ADD CONSTRAINT "attachment_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "attachment" ADD CONSTRAINT "attachment_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "attachment_message" ADD CONSTRAINT "attachment_message_attachment_id_fkey" FOREIGN KEY ("attachment_id") REFERENCES "attachment"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "attachment_message" ADD CONSTRAINT "attachment_message_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "realm_emoji" ADD CONSTRAINT "realm_emoji_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm_emoji" ADD CONSTRAINT "realm_emoji_author_id_fkey" FOREIGN KEY ("author_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "realm_filter" ADD CONSTRAINT "realm_filter_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_group" ADD CONSTRAINT "user_group_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_group_membership" ADD CONSTRAINT "user_group_membership_user_group_id_fkey" FOREIGN KEY ("user_group_id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "user_group_membership" ADD CONSTRAINT "user_group_membership_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "muted_topic" ADD CONSTRAINT "muted_topic_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "muted_topic" ADD CONSTRAINT "muted_topic_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_presence" ADD CONSTRAINT "user_presence_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_presence" ADD CONSTRAINT "user_presence_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_status" ADD CONSTRAINT "user_status_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "alert_word" ADD CONSTRAINT "alert_word_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "custom_profile_field" ADD CONSTRAINT "custom_profile_field_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "custom_profile_field_value" ADD CONSTRAINT "custom_profile_field_value_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "custom_profile_field_value" ADD CONSTRAINT "custom_profile_field_value_field_id_fkey" FOREIGN KEY ("field_id") REFERENCES "custom_profile_field"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "default_stream" ADD CONSTRAINT "default_stream_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "default_stream" ADD CONSTRAINT "default_stream_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "default_stream_group" ADD CONSTRAINT "default_stream_group_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "default_stream_group_stream" ADD CONSTRAINT "default_stream_group_stream_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "default_stream_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "default_stream_group_stream" ADD CONSTRAINT "default_stream_group_stream_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "user_hotspot" ADD CONSTRAINT "user_hotspot_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Bots as Zulip 3.x manages them (POST/GET/PATCH/DELETE /bots).
-- A bot's default streams (Zulip's UserProfile.default_sending_stream and
-- default_events_register_stream, shown by name in realm_bots) and whether its queues follow every
-- public stream. A stream that goes takes the setting with it, as Zulip's on_delete=SET_NULL.
ALTER TABLE "user_profile" ADD COLUMN "default_sending_stream_id" INTEGER;
ALTER TABLE "user_profile" ADD COLUMN "default_events_register_stream_id" INTEGER;
ALTER TABLE "user_profile" ADD COLUMN "default_all_public_streams" BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_default_sending_stream_id_fkey" FOREIGN KEY ("default_sending_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_default_events_register_stream_id_fkey" FOREIGN KEY ("default_events_register_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- An incoming-webhook or embedded bot's configuration (Zulip's BotConfigData): string values by
-- string key. Keyed by (bot, key) with no surrogate id, as bot_storage_data: one value per key,
-- and rewriting keys draws no sequence values. Keys are at most 100 characters (enforced by the
-- action), so a key always fits a btree entry. Rows go with their bot (Zulip: on_delete=CASCADE).
CREATE TABLE "bot_config_data" (
    "bot_profile_id" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "bot_config_data_pkey" PRIMARY KEY ("bot_profile_id","key")
);

ALTER TABLE "bot_config_data" ADD CONSTRAINT "bot_config_data_bot_profile_id_fkey" FOREIGN KEY ("bot_profile_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

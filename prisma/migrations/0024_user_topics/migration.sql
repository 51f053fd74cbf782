-- Zulip's UserTopic (feature levels 134, 170, 219): muted_topic becomes a visibility policy per
-- user and topic, 1 muted, 2 unmuted, 3 followed (0, inherit, is the absence of a row). Every row
-- kept so far is a mute.
ALTER TABLE "muted_topic" RENAME TO "user_topic";
ALTER TABLE "user_topic" RENAME COLUMN "date_muted" TO "last_updated";
ALTER TABLE "user_topic" ADD COLUMN "visibility_policy" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "user_topic" ALTER COLUMN "visibility_policy" DROP DEFAULT;
ALTER TABLE "user_topic" ADD CONSTRAINT "user_topic_visibility_policy_check" CHECK ("visibility_policy" IN (1, 2, 3));

ALTER TABLE "user_topic" RENAME CONSTRAINT "muted_topic_pkey" TO "user_topic_pkey";
ALTER TABLE "user_topic" RENAME CONSTRAINT "muted_topic_user_id_fkey" TO "user_topic_user_id_fkey";
ALTER TABLE "user_topic" RENAME CONSTRAINT "muted_topic_stream_id_fkey" TO "user_topic_stream_id_fkey";
ALTER INDEX "muted_topic_user_id_stream_id_idx" RENAME TO "user_topic_user_id_stream_id_idx";
ALTER INDEX "muted_topic_user_id_stream_id_lower_topic_name_key" RENAME TO "user_topic_user_id_stream_id_lower_topic_name_key";
ALTER SEQUENCE "muted_topic_id_seq" RENAME TO "user_topic_id_seq";

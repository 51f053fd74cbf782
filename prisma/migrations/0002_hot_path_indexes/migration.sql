-- Indexes Prisma's schema language cannot express (expressions and partial indexes). They serve
-- the hot queries: case-insensitive lookups that Zulip does everywhere, a user's unread messages,
-- and a stream's topic narrow. `prisma migrate diff` would report them as drift; that is expected.

-- Emails and stream names are unique per realm regardless of case, as in Zulip.
CREATE UNIQUE INDEX "user_profile_realm_id_lower_email_key" ON "user_profile"("realm_id", lower("email"));
CREATE UNIQUE INDEX "user_profile_realm_id_lower_delivery_email_key" ON "user_profile"("realm_id", lower("delivery_email"));
CREATE UNIQUE INDEX "stream_realm_id_lower_name_key" ON "stream"("realm_id", lower("name"));

-- A user's unread messages (flags bit 1 = read), the source of unread counts and first_unread.
CREATE INDEX "user_message_unread_idx" ON "user_message"("user_id", "message_id") WHERE ("flags" & 1) = 0;
-- A user's starred and mentioned messages (bits 2, 8 and 16).
CREATE INDEX "user_message_starred_idx" ON "user_message"("user_id", "message_id") WHERE ("flags" & 2) <> 0;
CREATE INDEX "user_message_mentioned_idx" ON "user_message"("user_id", "message_id") WHERE ("flags" & 24) <> 0;

-- A stream's topic narrow, newest first (topics compare case-insensitively).
CREATE INDEX "message_recipient_id_upper_subject_id_idx" ON "message"("recipient_id", upper("subject"), "id");

-- Active subscribers of a recipient, the fan-out query of every send.
CREATE INDEX "subscription_recipient_id_active_idx" ON "subscription"("recipient_id", "user_id") WHERE "active" AND "is_user_active";

-- Muted topics are unique per stream, case-insensitively.
CREATE UNIQUE INDEX "muted_topic_user_id_stream_id_lower_topic_name_key" ON "muted_topic"("user_id", "stream_id", lower("topic_name"));
-- At most one live custom emoji of a name per realm.
CREATE UNIQUE INDEX "realm_emoji_realm_id_name_active_key" ON "realm_emoji"("realm_id", "name") WHERE NOT "deactivated";

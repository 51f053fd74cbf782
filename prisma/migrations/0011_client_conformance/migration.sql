-- What Zulip clients read that the schema lacked.

-- /register's enter_sends, set by POST /users/me/enter-sends.
ALTER TABLE "user_profile" ADD COLUMN "enter_sends" BOOLEAN NOT NULL DEFAULT false;

-- A user's private messages (flags bit 2048 = is_private), newest first: /register's
-- recent_private_conversations walks it (Zulip's zerver_usermessage_is_private_message_id).
CREATE INDEX "user_message_private_idx" ON "user_message"("user_id", "message_id") WHERE ("flags" & 2048) <> 0;

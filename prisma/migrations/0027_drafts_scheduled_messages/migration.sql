-- Drafts (Zulip's feature level 87) and scheduled messages (feature levels 173, 179, 181, 184).
--
-- A draft keeps where it goes as the API shows it: `type` is '', 'stream' or 'private', `to_ids`
-- the stream's id or the other people's ids (sorted; the user's own id only for a note to self).
--
-- A scheduled message is sent by the worker tier at `scheduled_timestamp` (a delayed job, and a
-- sweep for rows whose job was lost). `delivered` and `failed` are set in the transaction that
-- sends the message or records the failure, under the row's lock, so a job that runs twice sends
-- once. Delivered rows are kept, as Zulip keeps them (delivered_message_id says which message).
CREATE TABLE "draft" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "to_ids" INTEGER[],
    "topic" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "last_edit_time" TIMESTAMPTZ(6) NOT NULL,
    CONSTRAINT "draft_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "draft_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE,
    CONSTRAINT "draft_type_check" CHECK ("type" IN ('', 'stream', 'private'))
);
CREATE INDEX "draft_user_id_last_edit_time_idx" ON "draft"("user_id", "last_edit_time");

CREATE TABLE "scheduled_message" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "stream_id" INTEGER,
    "to_user_ids" INTEGER[],
    "subject" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "rendered_content" TEXT NOT NULL,
    "sending_client" TEXT NOT NULL,
    "scheduled_timestamp" TIMESTAMPTZ(6) NOT NULL,
    "read_by_sender" BOOLEAN NOT NULL,
    "delivered" BOOLEAN NOT NULL DEFAULT false,
    "delivered_message_id" INTEGER,
    "failed" BOOLEAN NOT NULL DEFAULT false,
    "failure_message" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "scheduled_message_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "scheduled_message_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE,
    CONSTRAINT "scheduled_message_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "user_profile"("id") ON DELETE CASCADE,
    CONSTRAINT "scheduled_message_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE
);
-- The worker's sweep: rows still to send, by time.
CREATE INDEX "scheduled_message_pending_idx" ON "scheduled_message"("scheduled_timestamp") WHERE NOT "delivered" AND NOT "failed";
-- A user's list (GET /scheduled_messages, /register): failed ones included.
CREATE INDEX "scheduled_message_sender_idx" ON "scheduled_message"("sender_id", "scheduled_timestamp") WHERE NOT "delivered";

-- What a service bot (outgoing webhook, embedded) has sent about a message: its reply in the
-- conversation, and the note to its owner when the call failed. Inserted in the transaction that
-- sends the message, so a job that runs twice (its worker was killed after sending) sends nothing
-- twice.
CREATE TABLE "service_bot_reply" (
    "message_id" INTEGER NOT NULL,
    "bot_id" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "date_sent" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "service_bot_reply_pkey" PRIMARY KEY ("message_id", "bot_id", "kind"),
    CONSTRAINT "service_bot_reply_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE,
    CONSTRAINT "service_bot_reply_bot_id_fkey" FOREIGN KEY ("bot_id") REFERENCES "user_profile"("id") ON DELETE CASCADE
);
CREATE INDEX "service_bot_reply_bot_id_idx" ON "service_bot_reply"("bot_id");

-- Muted users (Zulip's MutedUser, feature levels 48 and 188): one row per user and user they muted,
-- with when. Messages from a muted user arrive read for the muter, and muting marks what was unread
-- from them read. The index on muted_user_id finds who muted a sender, once per message sent.
CREATE TABLE "muted_user" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "muted_user_id" INTEGER NOT NULL,
    "date_muted" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "muted_user_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "muted_user_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE,
    CONSTRAINT "muted_user_muted_user_id_fkey" FOREIGN KEY ("muted_user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE,
    CONSTRAINT "muted_user_not_self_check" CHECK ("user_id" <> "muted_user_id")
);
CREATE UNIQUE INDEX "muted_user_user_id_muted_user_id_key" ON "muted_user"("user_id", "muted_user_id");
CREATE INDEX "muted_user_muted_user_id_idx" ON "muted_user"("muted_user_id");

-- Bot storage (Zulip's BotStorageData, GET/PUT/DELETE /bot_storage): a user's string values by
-- string key. The primary key is (user_id, key): lookups are by user or by user and key, and with
-- no serial id, upserting and deleting keys draws no sequence values that a client could exhaust.
-- Keys are at most 500 characters (enforced by the action), so the key always fits a btree entry.
CREATE TABLE "bot_storage_data" (
    "user_id" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "bot_storage_data_pkey" PRIMARY KEY ("user_id","key")
);

-- A user's rows go with the user, as Zulip's on_delete=CASCADE.
ALTER TABLE "bot_storage_data" ADD CONSTRAINT "bot_storage_data_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Who may add custom emoji (Zulip 3.x's realm.add_emoji_by_admins_only): everyone but guests,
-- or administrators only.
ALTER TABLE "realm" ADD COLUMN "add_emoji_by_admins_only" BOOLEAN NOT NULL DEFAULT false;

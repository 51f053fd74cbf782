-- Zulip 10.0's saved snippets, message reports and personal/organization settings (feature levels
-- 296, 297, 329, 331, 348, 350).
--
-- A saved snippet is a user's own reusable text (Zulip's SavedSnippet): it goes with its user.
CREATE TABLE "saved_snippet" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "date_created" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "saved_snippet_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "saved_snippet_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE
);
CREATE INDEX "saved_snippet_user_id_idx" ON "saved_snippet"("user_id", "id");

-- The private channel message reports go to (none: reporting is off). Archiving or deleting the
-- channel does not clear it; /register and the report check that it is still live.
ALTER TABLE "realm"
    ADD COLUMN "moderation_request_channel_id" INTEGER,
    ADD COLUMN "enable_guest_user_dm_warning" BOOLEAN NOT NULL DEFAULT true;

-- Whether users may edit their own value of a custom profile field (Zulip's default: yes).
ALTER TABLE "custom_profile_field" ADD COLUMN "editable_by_user" BOOLEAN NOT NULL DEFAULT true;

-- Personal settings, with Zulip's defaults, for users and for the organization's new users.
ALTER TABLE "user_profile"
    ADD COLUMN "web_suggest_update_timezone" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "hide_ai_features" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "realm_user_default"
    ADD COLUMN "web_suggest_update_timezone" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "hide_ai_features" BOOLEAN NOT NULL DEFAULT false;

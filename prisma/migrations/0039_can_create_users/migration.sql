-- Who may create accounts with POST /users (Zulip's can_create_users, feature level 36): a
-- permission the server's operator grants (npm run cli -- grant-create-users), apart from the role.
-- Every organization's owners keep what they could do before.
ALTER TABLE "user_profile" ADD COLUMN "can_create_users" BOOLEAN NOT NULL DEFAULT false;
UPDATE "user_profile" SET "can_create_users" = true WHERE "role" = 100 AND NOT "is_bot";

-- Zulip feature level 163: who may see a user's real address (delivery_email) is each user's own
-- setting (1 everyone, 2 members, 3 administrators, 4 nobody, 5 moderators). Existing users keep
-- what the organization's setting gave them. The realm's column stays: it is the value new users
-- start with (realm_user_settings_defaults) and what Zulip 3.x clients are told and may set.
ALTER TABLE "user_profile" ADD COLUMN "email_address_visibility" INTEGER NOT NULL DEFAULT 1;
UPDATE "user_profile" u SET "email_address_visibility" = r."email_address_visibility" FROM "realm" r WHERE r."id" = u."realm_id";

-- realm_users shows delivery_email by the user's setting: a change of it is a change of realm_users.
DROP TRIGGER "user_profile_bump_realm_users_generation" ON "user_profile";
CREATE TRIGGER "user_profile_bump_realm_users_generation"
  AFTER INSERT OR DELETE OR UPDATE OF "realm_id", "email", "delivery_email", "full_name", "is_active", "role",
    "is_bot", "bot_type", "bot_owner_id", "timezone", "date_joined", "avatar_source", "avatar_version", "email_address_visibility"
  ON "user_profile" FOR EACH ROW EXECUTE FUNCTION "bump_realm_users_generation"();

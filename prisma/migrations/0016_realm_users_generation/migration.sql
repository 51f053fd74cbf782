-- Event nodes keep each realm's realm_users (as /register sends them, serialized), valid while this
-- number is unchanged: /register reads it after creating its queue. Triggers bump it on any change
-- to what realm_users shows of a user (their row, their custom profile field values), so no code
-- path can forget to.
ALTER TABLE "realm" ADD COLUMN "realm_users_generation" INTEGER NOT NULL DEFAULT 0;

CREATE FUNCTION "bump_realm_users_generation"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "realm" SET "realm_users_generation" = "realm_users_generation" + 1 WHERE "id" = OLD."realm_id";
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW."realm_id" <> OLD."realm_id") THEN
    UPDATE "realm" SET "realm_users_generation" = "realm_users_generation" + 1 WHERE "id" = NEW."realm_id";
  END IF;
  RETURN NULL;
END
$$;

-- Every column formatUser and isSystemBot read.
CREATE TRIGGER "user_profile_bump_realm_users_generation"
  AFTER INSERT OR DELETE OR UPDATE OF "realm_id", "email", "delivery_email", "full_name", "is_active", "role",
    "is_bot", "bot_type", "bot_owner_id", "timezone", "date_joined", "avatar_source", "avatar_version"
  ON "user_profile" FOR EACH ROW EXECUTE FUNCTION "bump_realm_users_generation"();

CREATE FUNCTION "bump_realm_users_generation_of_user"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "realm" SET "realm_users_generation" = "realm_users_generation" + 1
    WHERE "id" = (SELECT "realm_id" FROM "user_profile" WHERE "id" = OLD."user_id");
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW."user_id" <> OLD."user_id") THEN
    UPDATE "realm" SET "realm_users_generation" = "realm_users_generation" + 1
    WHERE "id" = (SELECT "realm_id" FROM "user_profile" WHERE "id" = NEW."user_id");
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "custom_profile_field_value_bump_realm_users_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "custom_profile_field_value"
  FOR EACH ROW EXECUTE FUNCTION "bump_realm_users_generation_of_user"();

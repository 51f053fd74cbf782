-- Event nodes also keep each realm's organization sections of /register (user groups, default
-- streams and stream groups, custom profile fields, custom emoji), valid while this number, the
-- stream and user generations (the streams and emoji authors they show) and the linkifier
-- generation are unchanged. Triggers bump it on any change to those tables.
ALTER TABLE "realm" ADD COLUMN "realm_config_generation" INTEGER NOT NULL DEFAULT 0;

-- Tables with the realm on the row.
CREATE FUNCTION "bump_realm_config_generation"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "realm" SET "realm_config_generation" = "realm_config_generation" + 1 WHERE "id" = OLD."realm_id";
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW."realm_id" <> OLD."realm_id") THEN
    UPDATE "realm" SET "realm_config_generation" = "realm_config_generation" + 1 WHERE "id" = NEW."realm_id";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_group_bump_realm_config_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "user_group" FOR EACH ROW EXECUTE FUNCTION "bump_realm_config_generation"();
CREATE TRIGGER "default_stream_bump_realm_config_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "default_stream" FOR EACH ROW EXECUTE FUNCTION "bump_realm_config_generation"();
CREATE TRIGGER "default_stream_group_bump_realm_config_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "default_stream_group" FOR EACH ROW EXECUTE FUNCTION "bump_realm_config_generation"();
CREATE TRIGGER "custom_profile_field_bump_realm_config_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "custom_profile_field" FOR EACH ROW EXECUTE FUNCTION "bump_realm_config_generation"();
CREATE TRIGGER "realm_emoji_bump_realm_config_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "realm_emoji" FOR EACH ROW EXECUTE FUNCTION "bump_realm_config_generation"();

-- A group's members: the realm is the group's. (Deleted with their group, the group's own
-- trigger has bumped it already.)
CREATE FUNCTION "bump_realm_config_generation_of_user_group"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "realm" SET "realm_config_generation" = "realm_config_generation" + 1
    WHERE "id" = (SELECT "realm_id" FROM "user_group" WHERE "id" = OLD."user_group_id");
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW."user_group_id" <> OLD."user_group_id") THEN
    UPDATE "realm" SET "realm_config_generation" = "realm_config_generation" + 1
    WHERE "id" = (SELECT "realm_id" FROM "user_group" WHERE "id" = NEW."user_group_id");
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_group_membership_bump_realm_config_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "user_group_membership" FOR EACH ROW EXECUTE FUNCTION "bump_realm_config_generation_of_user_group"();

-- A default stream group's streams: the realm is the group's.
CREATE FUNCTION "bump_realm_config_generation_of_stream_group"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "realm" SET "realm_config_generation" = "realm_config_generation" + 1
    WHERE "id" = (SELECT "realm_id" FROM "default_stream_group" WHERE "id" = OLD."group_id");
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW."group_id" <> OLD."group_id") THEN
    UPDATE "realm" SET "realm_config_generation" = "realm_config_generation" + 1
    WHERE "id" = (SELECT "realm_id" FROM "default_stream_group" WHERE "id" = NEW."group_id");
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "default_stream_group_stream_bump_realm_config_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "default_stream_group_stream" FOR EACH ROW EXECUTE FUNCTION "bump_realm_config_generation_of_stream_group"();

-- Nodes keep the body of each message they have served (GET /messages), valid while its
-- cache_version is unchanged, and each sender's name, email and avatar, valid while the realm's
-- user_generation is. Triggers bump both, so no code path can forget to: a fetch reads the
-- version with each message's id and flags, and every request reads the generation with its realm.
ALTER TABLE "message" ADD COLUMN "cache_version" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "realm" ADD COLUMN "user_generation" INTEGER NOT NULL DEFAULT 0;

-- Anything a fetched message shows from its own row.
CREATE FUNCTION "bump_message_cache_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."cache_version" := OLD."cache_version" + 1;
  RETURN NEW;
END
$$;

CREATE TRIGGER "message_bump_cache_version"
  BEFORE UPDATE OF "sender_id", "recipient_id", "subject", "content", "rendered_content", "date_sent",
    "sending_client", "last_edit_time", "is_me_message"
  ON "message" FOR EACH ROW EXECUTE FUNCTION "bump_message_cache_version"();

-- A message shows its reactions: adding or removing one changes the message's version.
CREATE FUNCTION "bump_reacted_message_cache_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "message" SET "cache_version" = "cache_version" + 1 WHERE "id" = OLD."message_id";
  END IF;
  IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW."message_id" <> OLD."message_id") THEN
    UPDATE "message" SET "cache_version" = "cache_version" + 1 WHERE "id" = NEW."message_id";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "reaction_bump_message_cache_version"
  AFTER INSERT OR DELETE OR UPDATE ON "reaction" FOR EACH ROW EXECUTE FUNCTION "bump_reacted_message_cache_version"();

-- What a message shows of its sender (and of each user who reacted).
CREATE FUNCTION "bump_realm_user_generation"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "realm" SET "user_generation" = "user_generation" + 1 WHERE "id" = OLD."realm_id";
  IF TG_OP = 'UPDATE' AND NEW."realm_id" <> OLD."realm_id" THEN
    UPDATE "realm" SET "user_generation" = "user_generation" + 1 WHERE "id" = NEW."realm_id";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_profile_bump_realm_user_generation"
  AFTER DELETE OR UPDATE OF "realm_id", "email", "full_name", "short_name", "avatar_source", "avatar_version"
  ON "user_profile" FOR EACH ROW EXECUTE FUNCTION "bump_realm_user_generation"();

-- Nodes also keep each authenticated user with its realm, valid while neither row has changed
-- (their xmin is unchanged): the hot fetch path checks that inside its page query instead of
-- authenticating in a round trip of its own. The realm's linkifiers belong to what is kept, so
-- a change to them counts as a change to the realm.
ALTER TABLE "realm" ADD COLUMN "linkifier_generation" INTEGER NOT NULL DEFAULT 0;

CREATE FUNCTION "bump_realm_linkifier_generation"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "realm" SET "linkifier_generation" = "linkifier_generation" + 1 WHERE "id" = OLD."realm_id";
  END IF;
  IF TG_OP <> 'DELETE' THEN
    UPDATE "realm" SET "linkifier_generation" = "linkifier_generation" + 1 WHERE "id" = NEW."realm_id";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "realm_filter_bump_realm_linkifier_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "realm_filter" FOR EACH ROW EXECUTE FUNCTION "bump_realm_linkifier_generation"();

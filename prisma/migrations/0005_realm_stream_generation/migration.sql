-- Nodes keep a copy of each realm's streams for the hot paths (sending, fetching a stream), valid
-- while this number is unchanged; every request reads it with its realm while authenticating. A
-- trigger bumps it on any change to a stream row, so no code path can forget to. Only
-- first_message_id, which sending itself sets, does not count.
ALTER TABLE "realm" ADD COLUMN "stream_generation" INTEGER NOT NULL DEFAULT 0;

CREATE FUNCTION "bump_realm_stream_generation"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE "realm" SET "stream_generation" = "stream_generation" + 1 WHERE "id" = OLD."realm_id";
  ELSE
    UPDATE "realm" SET "stream_generation" = "stream_generation" + 1 WHERE "id" = NEW."realm_id";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "stream_bump_realm_stream_generation"
  AFTER INSERT OR DELETE OR UPDATE OF "realm_id", "name", "description", "rendered_description", "invite_only",
    "is_web_public", "stream_post_policy", "history_public_to_subscribers", "deactivated", "date_created",
    "message_retention_days", "email_token", "recipient_id"
  ON "stream" FOR EACH ROW EXECUTE FUNCTION "bump_realm_stream_generation"();

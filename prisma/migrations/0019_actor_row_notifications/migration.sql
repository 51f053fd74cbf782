-- Event nodes trust a copy of a user they have checked (poll-auth.ts) until Postgres says that the
-- user's row or its realm's changed. Any UPDATE changes the row's xmin, which is what the check
-- compares, so every UPDATE and DELETE notifies channel actor_rows with `u<id>` or `r<id>`.
-- Notifications are sent at commit, and identical ones within a transaction once. A TRUNCATE
-- (row triggers do not fire) says `*`: forget everything.
CREATE FUNCTION "notify_actor_row"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('actor_rows', TG_ARGV[0] || OLD."id");
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_profile_notify_actor_row"
  AFTER UPDATE OR DELETE ON "user_profile" FOR EACH ROW EXECUTE FUNCTION "notify_actor_row"('u');
CREATE TRIGGER "realm_notify_actor_row"
  AFTER UPDATE OR DELETE ON "realm" FOR EACH ROW EXECUTE FUNCTION "notify_actor_row"('r');

CREATE FUNCTION "notify_actor_rows_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('actor_rows', '*');
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_profile_notify_actor_rows_truncated"
  AFTER TRUNCATE ON "user_profile" FOR EACH STATEMENT EXECUTE FUNCTION "notify_actor_rows_truncated"();
CREATE TRIGGER "realm_notify_actor_rows_truncated"
  AFTER TRUNCATE ON "realm" FOR EACH STATEMENT EXECUTE FUNCTION "notify_actor_rows_truncated"();

-- user_message gets a row per recipient of every message: most of what a send writes. Its two
-- foreign keys were checked row by row, by triggers that look up and lock the referenced rows:
-- measured on 50,000 rows, two-thirds of the insert's cost (28 µs a row with them, 9 µs without).
-- What the keys guaranteed is kept by other means, paid on the rare deletes instead:
-- - The message write statement inserts rows only for the message it inserts in the same
--   statement, so they cannot point at a missing message or user.
-- - The two other writers (a historical row for a message read from a stream's history) insert
--   only for messages they lock FOR KEY SHARE in the same statement, as the key's check did.
-- - Deleting messages deletes their rows (ON DELETE CASCADE), and a user with rows cannot be
--   deleted (ON DELETE RESTRICT; users are deactivated, never deleted), by the triggers below.
ALTER TABLE "user_message" DROP CONSTRAINT "user_message_message_id_fkey";
ALTER TABLE "user_message" DROP CONSTRAINT "user_message_user_id_fkey";

CREATE FUNCTION "delete_user_messages_of_deleted_messages"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "user_message" WHERE "message_id" IN (SELECT "id" FROM deleted);
  RETURN NULL;
END
$$;

CREATE TRIGGER "message_delete_user_messages"
  AFTER DELETE ON "message" REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION "delete_user_messages_of_deleted_messages"();

CREATE FUNCTION "restrict_user_delete_with_user_messages"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM "user_message" WHERE "user_id" = OLD."id") THEN
    RAISE EXCEPTION 'user % still has user_message rows', OLD."id" USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN OLD;
END
$$;

CREATE TRIGGER "user_profile_restrict_delete_with_user_messages"
  BEFORE DELETE ON "user_profile"
  FOR EACH ROW EXECUTE FUNCTION "restrict_user_delete_with_user_messages"();

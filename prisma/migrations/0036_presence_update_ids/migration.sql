-- Incremental presence (Zulip's feature level 263): every change to a presence row takes the next
-- number of one sequence, so a client that knows the last number it saw asks only for the rows
-- changed since (`presence_last_update_id` on /register, `last_update_id` on POST /users/me/presence).
CREATE SEQUENCE "presence_update_id_seq";
ALTER TABLE "user_presence" ADD COLUMN "last_update_id" BIGINT NOT NULL DEFAULT 0;
UPDATE "user_presence" SET "last_update_id" = nextval('presence_update_id_seq');
CREATE INDEX "user_presence_realm_id_last_update_id_idx" ON "user_presence" ("realm_id", "last_update_id");

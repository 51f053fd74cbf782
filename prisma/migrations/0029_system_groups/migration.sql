-- Zulip 9.0's system groups and group-based permission settings.
--
-- Every realm has eight system groups (is_system_group), named as Zulip names them, each the
-- direct subgroup of the next: role:owners ⊂ role:administrators ⊂ role:moderators ⊂
-- role:fullmembers ⊂ role:members ⊂ role:everyone ⊂ role:internet; role:nobody stays empty. A
-- user is a direct member of the group of their role (members past the realm's waiting period of
-- role:fullmembers too); actions keep that so (lib/system-groups.ts).
--
-- Settings that name a group hold its id: the realm's (can_access_all_users_group_id,
-- can_create_public/private/web_public_channel_group_id, direct_message_initiator/permission_group_id,
-- create_multiuse_invite_group_id), a stream's can_remove_subscribers_group_id and a user group's
-- can_mention_group_id. Existing organizations get the groups their integer policies meant.

-- One group inside another (Zulip's GroupGroupMembership).
CREATE TABLE "group_group_membership" (
  "supergroup_id" INTEGER NOT NULL REFERENCES "user_group"("id") ON DELETE CASCADE,
  "subgroup_id" INTEGER NOT NULL REFERENCES "user_group"("id") ON DELETE CASCADE,
  PRIMARY KEY ("supergroup_id", "subgroup_id")
);
CREATE INDEX "group_group_membership_subgroup_id_idx" ON "group_group_membership"("subgroup_id");

-- A group's subgroups: the realm is the supergroup's (organization sections cache, 0017).
CREATE FUNCTION "bump_realm_config_generation_of_subgroup"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE "realm" SET "realm_config_generation" = "realm_config_generation" + 1
    WHERE "id" = (SELECT "realm_id" FROM "user_group" WHERE "id" = OLD."supergroup_id");
  END IF;
  IF TG_OP <> 'DELETE' THEN
    UPDATE "realm" SET "realm_config_generation" = "realm_config_generation" + 1
    WHERE "id" = (SELECT "realm_id" FROM "user_group" WHERE "id" = NEW."supergroup_id");
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "group_group_membership_bump_realm_config_generation"
  AFTER INSERT OR DELETE OR UPDATE ON "group_group_membership" FOR EACH ROW EXECUTE FUNCTION "bump_realm_config_generation_of_subgroup"();

ALTER TABLE "user_group" ADD COLUMN "can_mention_group_id" INTEGER REFERENCES "user_group"("id");
ALTER TABLE "stream" ADD COLUMN "can_remove_subscribers_group_id" INTEGER REFERENCES "user_group"("id");
-- The stream cache (0005) follows this column too.
DROP TRIGGER "stream_bump_realm_stream_generation" ON "stream";
CREATE TRIGGER "stream_bump_realm_stream_generation"
  AFTER INSERT OR DELETE OR UPDATE OF "realm_id", "name", "description", "rendered_description", "invite_only",
    "is_web_public", "stream_post_policy", "history_public_to_subscribers", "deactivated", "date_created",
    "message_retention_days", "email_token", "recipient_id", "can_remove_subscribers_group_id"
  ON "stream" FOR EACH ROW EXECUTE FUNCTION "bump_realm_stream_generation"();
ALTER TABLE "realm"
  ADD COLUMN "can_access_all_users_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_create_public_channel_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_create_private_channel_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_create_web_public_channel_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "direct_message_initiator_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "direct_message_permission_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "create_multiuse_invite_group_id" INTEGER REFERENCES "user_group"("id");

-- Names users gave their groups that Zulip reserves ('role:' and the like) step aside.
UPDATE "user_group" SET "name" = left("name", 80) || ' (' || "id" || ')'
WHERE NOT "is_system_group" AND ("name" LIKE 'role:%' OR "name" LIKE '@%' OR "name" LIKE 'user:%' OR "name" LIKE 'stream:%' OR "name" LIKE 'channel:%');

-- The system groups of every realm, in Zulip's order of creation.
INSERT INTO "user_group" ("realm_id", "name", "description", "is_system_group")
SELECT r."id", g."name", g."description", true
FROM "realm" r CROSS JOIN (VALUES
  (1, 'role:nobody', 'Nobody'),
  (2, 'role:owners', 'Owners of this organization'),
  (3, 'role:administrators', 'Administrators of this organization, including owners'),
  (4, 'role:moderators', 'Moderators of this organization, including administrators'),
  (5, 'role:fullmembers', 'Members of this organization, not including new accounts and guests'),
  (6, 'role:members', 'Members of this organization, not including guests'),
  (7, 'role:everyone', 'Everyone in this organization, including guests'),
  (8, 'role:internet', 'Everyone on the Internet')
) AS g("position", "name", "description")
ORDER BY r."id", g."position";

INSERT INTO "group_group_membership" ("supergroup_id", "subgroup_id")
SELECT sup."id", sub."id"
FROM (VALUES
  ('role:owners', 'role:administrators'),
  ('role:administrators', 'role:moderators'),
  ('role:moderators', 'role:fullmembers'),
  ('role:fullmembers', 'role:members'),
  ('role:members', 'role:everyone'),
  ('role:everyone', 'role:internet')
) AS e("sub", "sup")
JOIN "user_group" sub ON sub."is_system_group" AND sub."name" = e."sub"
JOIN "user_group" sup ON sup."is_system_group" AND sup."name" = e."sup" AND sup."realm_id" = sub."realm_id";

-- Each user (deactivated ones too, as Zulip 9.0 keeps theirs) in the group of their role; the
-- server's own bots (Notification Bot) are in none, as Zulip's cross-realm bots.
INSERT INTO "user_group_membership" ("user_group_id", "user_id")
SELECT g."id", u."id"
FROM "user_profile" u
JOIN "user_group" g ON g."realm_id" = u."realm_id" AND g."is_system_group" AND g."name" = CASE u."role"
  WHEN 100 THEN 'role:owners' WHEN 200 THEN 'role:administrators' WHEN 300 THEN 'role:moderators'
  WHEN 400 THEN 'role:members' WHEN 600 THEN 'role:everyone' END
WHERE NOT (u."is_bot" AND u."bot_owner_id" IS NULL AND lower(split_part(u."delivery_email", '@', 1)) = 'notification-bot')
ON CONFLICT DO NOTHING;

INSERT INTO "user_group_membership" ("user_group_id", "user_id")
SELECT g."id", u."id"
FROM "user_profile" u
JOIN "realm" r ON r."id" = u."realm_id"
JOIN "user_group" g ON g."realm_id" = u."realm_id" AND g."is_system_group" AND g."name" = 'role:fullmembers'
WHERE u."role" = 400 AND u."date_joined" + make_interval(days => r."waiting_period_threshold") <= now()
  AND NOT (u."is_bot" AND u."bot_owner_id" IS NULL AND lower(split_part(u."delivery_email", '@', 1)) = 'notification-bot')
ON CONFLICT DO NOTHING;

-- The settings, from the integer policies they replace: create_stream_policy 1 members, 2
-- administrators, 3 full members; private_message_policy 2 (disabled) is role:nobody.
UPDATE "realm" r SET
  "can_access_all_users_group_id" = (SELECT "id" FROM "user_group" WHERE "realm_id" = r."id" AND "is_system_group" AND "name" = 'role:everyone'),
  "can_create_public_channel_group_id" = (SELECT "id" FROM "user_group" WHERE "realm_id" = r."id" AND "is_system_group" AND "name" =
    CASE r."create_stream_policy" WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' ELSE 'role:members' END),
  "can_create_private_channel_group_id" = (SELECT "id" FROM "user_group" WHERE "realm_id" = r."id" AND "is_system_group" AND "name" =
    CASE r."create_stream_policy" WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' ELSE 'role:members' END),
  "can_create_web_public_channel_group_id" = (SELECT "id" FROM "user_group" WHERE "realm_id" = r."id" AND "is_system_group" AND "name" = 'role:owners'),
  "direct_message_initiator_group_id" = (SELECT "id" FROM "user_group" WHERE "realm_id" = r."id" AND "is_system_group" AND "name" = 'role:everyone'),
  "direct_message_permission_group_id" = (SELECT "id" FROM "user_group" WHERE "realm_id" = r."id" AND "is_system_group" AND "name" =
    CASE r."private_message_policy" WHEN 2 THEN 'role:nobody' ELSE 'role:everyone' END),
  "create_multiuse_invite_group_id" = (SELECT "id" FROM "user_group" WHERE "realm_id" = r."id" AND "is_system_group" AND "name" = 'role:administrators');

UPDATE "stream" s SET "can_remove_subscribers_group_id" =
  (SELECT "id" FROM "user_group" WHERE "realm_id" = s."realm_id" AND "is_system_group" AND "name" = 'role:administrators');

-- Anyone may mention a group users made; nobody a system group (Zulip's defaults).
UPDATE "user_group" g SET "can_mention_group_id" = (SELECT "id" FROM "user_group" WHERE "realm_id" = g."realm_id" AND "is_system_group" AND "name" =
  CASE WHEN g."is_system_group" THEN 'role:nobody' ELSE 'role:everyone' END);

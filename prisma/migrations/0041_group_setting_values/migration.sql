-- Zulip 10.0's permissions as group-setting values (feature levels 281 to 367).
--
-- A setting names a user group: a named one (a system group or one users made), or an anonymous
-- group, a row of user_group with no name that exists only to be one setting's value (its direct
-- members and direct subgroups; Zulip's UserGroup without a NamedUserGroup). Named groups gain
-- Zulip 10's own settings, their creator and date, and deactivation.
--
-- Existing organizations get, for each new setting, the system group their integer policy meant
-- (1 members, 2 administrators, 3 full members, 4 moderators, 5 everyone, 6 nobody, 7 owners);
-- the integer columns stay, kept in step for the clients that read them.

ALTER TABLE "user_group" ALTER COLUMN "name" DROP NOT NULL;
ALTER TABLE "user_group"
  ADD COLUMN "creator_id" INTEGER REFERENCES "user_profile"("id") ON DELETE SET NULL,
  ADD COLUMN "date_created" TIMESTAMPTZ(3),
  ADD COLUMN "deactivated" BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN "can_add_members_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_join_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_leave_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_manage_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_remove_members_group_id" INTEGER REFERENCES "user_group"("id");
-- Groups made from now on are dated; older ones have no date (Zulip's null).
ALTER TABLE "user_group" ALTER COLUMN "date_created" SET DEFAULT CURRENT_TIMESTAMP;

CREATE FUNCTION "system_group_id"(realm INTEGER, group_name TEXT) RETURNS INTEGER LANGUAGE sql STABLE AS $$
  SELECT "id" FROM "user_group" WHERE "realm_id" = realm AND "is_system_group" AND "name" = group_name
$$;

CREATE FUNCTION "policy_group_id"(realm INTEGER, policy INTEGER) RETURNS INTEGER LANGUAGE sql STABLE AS $$
  SELECT "system_group_id"(realm, CASE policy
    WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers'
    WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody'
    WHEN 7 THEN 'role:owners' ELSE 'role:administrators' END)
$$;

-- Existing groups: system groups' settings are role:nobody (Zulip's default_for_system_groups);
-- users' groups were governed by the realm's user_group_edit_policy, which becomes
-- can_manage_all_groups below, so their own settings give nothing more (leaving stays open).
UPDATE "user_group" g SET
  "can_add_members_group_id" = "system_group_id"(g."realm_id", 'role:nobody'),
  "can_join_group_id" = "system_group_id"(g."realm_id", 'role:nobody'),
  "can_leave_group_id" = "system_group_id"(g."realm_id", CASE WHEN g."is_system_group" THEN 'role:nobody' ELSE 'role:everyone' END),
  "can_manage_group_id" = "system_group_id"(g."realm_id", 'role:nobody'),
  "can_remove_members_group_id" = "system_group_id"(g."realm_id", 'role:nobody');

ALTER TABLE "stream"
  ADD COLUMN "can_send_message_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_administer_channel_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_add_subscribers_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_subscribe_group_id" INTEGER REFERENCES "user_group"("id");

-- stream_post_policy: 1 anyone, 2 administrators, 3 full members, 4 moderators.
UPDATE "stream" s SET
  "can_send_message_group_id" = "system_group_id"(s."realm_id", CASE s."stream_post_policy"
    WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' ELSE 'role:everyone' END),
  "can_administer_channel_group_id" = "system_group_id"(s."realm_id", 'role:nobody'),
  "can_add_subscribers_group_id" = "system_group_id"(s."realm_id", 'role:nobody'),
  "can_subscribe_group_id" = "system_group_id"(s."realm_id", 'role:nobody');

-- The stream cache (0005) follows the new columns too.
DROP TRIGGER "stream_bump_realm_stream_generation" ON "stream";
CREATE TRIGGER "stream_bump_realm_stream_generation"
  AFTER INSERT OR DELETE OR UPDATE OF "realm_id", "name", "description", "rendered_description", "invite_only",
    "is_web_public", "stream_post_policy", "history_public_to_subscribers", "deactivated", "date_created",
    "message_retention_days", "email_token", "recipient_id", "can_remove_subscribers_group_id",
    "can_send_message_group_id", "can_administer_channel_group_id", "can_add_subscribers_group_id", "can_subscribe_group_id"
  ON "stream" FOR EACH ROW EXECUTE FUNCTION "bump_realm_stream_generation"();

ALTER TABLE "realm"
  ADD COLUMN "can_add_custom_emoji_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_add_subscribers_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_create_bots_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_create_write_only_bots_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_create_groups_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_delete_any_message_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_delete_own_message_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_invite_users_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_manage_all_groups_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_manage_billing_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_mention_many_users_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_move_messages_between_channels_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_move_messages_between_topics_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_resolve_topics_group_id" INTEGER REFERENCES "user_group"("id"),
  ADD COLUMN "can_summarize_topics_group_id" INTEGER REFERENCES "user_group"("id");

-- bot_creation_policy: 1 everyone, 2 generic bots by administrators only, 3 administrators only.
-- wildcard_mention_policy: 1 everyone, 2 members, 3 full members, 4 (3.x's stream admins) and 5
-- administrators, 6 nobody, 7 moderators.
UPDATE "realm" r SET
  "can_add_custom_emoji_group_id" = "policy_group_id"(r."id", r."add_custom_emoji_policy"),
  "can_add_subscribers_group_id" = "policy_group_id"(r."id", r."invite_to_stream_policy"),
  "can_create_bots_group_id" = "system_group_id"(r."id", CASE r."bot_creation_policy" WHEN 1 THEN 'role:members' ELSE 'role:administrators' END),
  "can_create_write_only_bots_group_id" = "system_group_id"(r."id", CASE r."bot_creation_policy" WHEN 3 THEN 'role:administrators' ELSE 'role:members' END),
  "can_create_groups_id" = "policy_group_id"(r."id", r."user_group_edit_policy"),
  "can_delete_any_message_group_id" = "system_group_id"(r."id", 'role:administrators'),
  "can_delete_own_message_group_id" = "policy_group_id"(r."id", r."delete_own_message_policy"),
  "can_invite_users_group_id" = "policy_group_id"(r."id", r."invite_to_realm_policy"),
  "can_manage_all_groups_id" = "policy_group_id"(r."id", r."user_group_edit_policy"),
  "can_manage_billing_group_id" = "system_group_id"(r."id", 'role:administrators'),
  "can_mention_many_users_group_id" = "system_group_id"(r."id", CASE r."wildcard_mention_policy"
    WHEN 1 THEN 'role:everyone' WHEN 2 THEN 'role:members' WHEN 3 THEN 'role:fullmembers' WHEN 6 THEN 'role:nobody'
    WHEN 7 THEN 'role:moderators' ELSE 'role:administrators' END),
  "can_move_messages_between_channels_group_id" = "policy_group_id"(r."id", r."move_messages_between_streams_policy"),
  "can_move_messages_between_topics_group_id" = "policy_group_id"(r."id", r."edit_topic_policy"),
  "can_resolve_topics_group_id" = "system_group_id"(r."id", 'role:everyone'),
  "can_summarize_topics_group_id" = "system_group_id"(r."id", 'role:everyone');

DROP FUNCTION "policy_group_id"(INTEGER, INTEGER);
DROP FUNCTION "system_group_id"(INTEGER, TEXT);

-- Zulip 9.0's integer permission policies that replaced Zulip 3.x's booleans (feature levels 56, 75,
-- 85, 101 and 162), and the moderator role (user_profile.role 300, feature level 60, needs no
-- column). Values are Zulip's Realm.POLICY_*: 1 members, 2 administrators, 3 full members,
-- 4 moderators, 5 everyone, 6 nobody. Defaults are Zulip's for new organizations; existing
-- organizations get the policy that does what their 3.x setting did, and PATCH /realm keeps the
-- 3.x booleans in step (lib/permissions.ts, actions/realm-settings.ts).
ALTER TABLE "realm" ADD COLUMN "edit_topic_policy" INTEGER NOT NULL DEFAULT 5;
ALTER TABLE "realm" ADD COLUMN "move_messages_between_streams_policy" INTEGER NOT NULL DEFAULT 2;
ALTER TABLE "realm" ADD COLUMN "delete_own_message_policy" INTEGER NOT NULL DEFAULT 2;
ALTER TABLE "realm" ADD COLUMN "add_custom_emoji_policy" INTEGER NOT NULL DEFAULT 1;
-- null: no limit. Administrators and moderators have none anyway.
ALTER TABLE "realm" ADD COLUMN "move_messages_within_stream_limit_seconds" INTEGER DEFAULT 259200;
ALTER TABLE "realm" ADD COLUMN "move_messages_between_streams_limit_seconds" INTEGER DEFAULT 604800;

-- 3.x: retitling others' messages by anyone when allowed (within a day), else by administrators;
-- moving between streams by administrators only; deleting one's own messages by anyone when allowed.
UPDATE "realm" SET
  "edit_topic_policy" = CASE WHEN "allow_community_topic_editing" THEN 5 ELSE 2 END,
  "move_messages_within_stream_limit_seconds" = 86400,
  "delete_own_message_policy" = CASE WHEN "allow_message_deleting" THEN 5 ELSE 2 END,
  "add_custom_emoji_policy" = CASE WHEN "add_emoji_by_admins_only" THEN 2 ELSE 1 END;

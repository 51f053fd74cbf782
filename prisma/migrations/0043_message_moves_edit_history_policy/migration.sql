-- Zulip 10.0's message features (feature levels 358 and 365).
--
-- When a message was last moved to another channel or topic (last_moved_timestamp); resolving or
-- unresolving its topic is not a move. last_edit_time now says when its content was last edited,
-- and nothing else. Both are backfilled from the edit history (message_edit): a topic change's
-- new topic is the next topic change's previous topic, or the message's topic today.
ALTER TABLE "message" ADD COLUMN "last_moved_time" TIMESTAMPTZ(6);

WITH "topic_changes" AS (
  SELECT e."message_id", e."timestamp", e."prev_topic",
         lead(e."prev_topic") OVER (PARTITION BY e."message_id" ORDER BY e."id") AS "next_prev_topic"
  FROM "message_edit" e WHERE e."prev_topic" IS NOT NULL
), "moves" AS (
  SELECT "message_id", "timestamp" FROM "message_edit" WHERE "prev_stream_id" IS NOT NULL
  UNION ALL
  SELECT t."message_id", t."timestamp" FROM "topic_changes" t JOIN "message" m ON m."id" = t."message_id"
  WHERE regexp_replace(t."prev_topic", '^[✔ ]+', '') <> regexp_replace(coalesce(t."next_prev_topic", m."subject"), '^[✔ ]+', '')
)
UPDATE "message" m SET "last_moved_time" = x."moved"
FROM (SELECT "message_id", max("timestamp") AS "moved" FROM "moves" GROUP BY "message_id") x
WHERE m."id" = x."message_id";

-- Messages whose history is known: last_edit_time is the last content edit, or none.
UPDATE "message" m SET "last_edit_time" = x."edited"
FROM (
  SELECT "message_id", max("timestamp") FILTER (WHERE "prev_content" IS NOT NULL) AS "edited"
  FROM "message_edit" GROUP BY "message_id"
) x
WHERE m."id" = x."message_id" AND m."last_edit_time" IS DISTINCT FROM x."edited";

-- A fetched message shows when it was moved: its cached copy must follow (0007's trigger).
DROP TRIGGER "message_bump_cache_version" ON "message";
CREATE TRIGGER "message_bump_cache_version"
  BEFORE UPDATE OF "sender_id", "recipient_id", "subject", "content", "rendered_content", "date_sent",
    "sending_client", "last_edit_time", "last_moved_time", "is_me_message"
  ON "message" FOR EACH ROW EXECUTE FUNCTION "bump_message_cache_version"();

-- Who sees messages' edit history (Zulip's MessageEditHistoryVisibilityPolicyEnum): 1 all of it,
-- 2 moves only, 3 none. allow_edit_history stays, kept in step (false for none), for 3.x clients.
ALTER TABLE "realm" ADD COLUMN "message_edit_history_visibility_policy" INTEGER NOT NULL DEFAULT 1;
UPDATE "realm" SET "message_edit_history_visibility_policy" = 3 WHERE NOT "allow_edit_history";

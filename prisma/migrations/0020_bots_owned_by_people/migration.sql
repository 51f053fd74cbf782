-- No bot is owned by a bot. Until every /bots endpoint refused bots, a bot could create bots,
-- which it then owned, and deactivating the person above it left them running. Each bot owned by
-- a bot goes to the nearest person up its chain of owners, who could already act through that
-- chain, and gets a new API key, since the bot that owned it could read the old one (as any
-- change of owner does now). If that person is deactivated, or the chain reaches no person (it
-- ends at a bot no one owns), the bot is deactivated too, as deactivating that person now would,
-- and without a person it is left to the administrators, as a bot no one owns.
-- One statement, so it applies whole or not at all, and a second run finds nothing to do.
WITH RECURSIVE "chain" ("bot_id", "owner_id", "owner_is_bot", "owner_is_active", "next_id", "depth") AS (
    SELECT "bot"."id", "owner"."id", "owner"."is_bot", "owner"."is_active", "owner"."bot_owner_id", 1
    FROM "user_profile" "bot" JOIN "user_profile" "owner" ON "owner"."id" = "bot"."bot_owner_id"
    WHERE "bot"."is_bot" AND "owner"."is_bot"
  UNION ALL
    SELECT "chain"."bot_id", "owner"."id", "owner"."is_bot", "owner"."is_active", "owner"."bot_owner_id", "chain"."depth" + 1
    FROM "chain" JOIN "user_profile" "owner" ON "owner"."id" = "chain"."next_id"
    -- A chain ends at its first person; the bound ends a cycle, which no code path could make.
    WHERE "chain"."owner_is_bot" AND "chain"."depth" < 100
),
"resolved" AS (
  -- Each bot's nearest person, or (none found) any row of its chain, standing for "no one".
  SELECT DISTINCT ON ("bot_id")
    "bot_id",
    CASE WHEN "owner_is_bot" THEN NULL ELSE "owner_id" END AS "person_id",
    NOT "owner_is_bot" AND "owner_is_active" AS "person_is_active"
  FROM "chain"
  ORDER BY "bot_id", "owner_is_bot", "depth"
),
"moved" AS (
  UPDATE "user_profile" SET
    "bot_owner_id" = "resolved"."person_id",
    "is_active" = "user_profile"."is_active" AND "resolved"."person_is_active",
    -- 32 characters, as the server's keys; 122 random bits from the server's strong source.
    "api_key" = replace(gen_random_uuid()::text, '-', '')
  FROM "resolved"
  WHERE "user_profile"."id" = "resolved"."bot_id"
  RETURNING "user_profile"."id", "user_profile"."is_active"
)
UPDATE "subscription" SET "is_user_active" = false
FROM "moved"
WHERE "subscription"."user_id" = "moved"."id" AND NOT "moved"."is_active" AND "subscription"."is_user_active";

-- The outbox keeps each change's events only until they are published: written once, read back
-- whole (by the sweeper, after a crash), never queried inside. json stores the text as written;
-- jsonb would parse it into its binary form on every insert, which for a message to a stream of
-- 1,000 (every recipient with its flags) cost Postgres more than the rest of the event did.
ALTER TABLE "event_outbox" ALTER COLUMN "events" TYPE json USING "events"::json;
-- Nor is it compressed: a row lives for milliseconds, and compressing tens of kilobytes costs
-- more than writing them out.
ALTER TABLE "event_outbox" ALTER COLUMN "events" SET STORAGE EXTERNAL;

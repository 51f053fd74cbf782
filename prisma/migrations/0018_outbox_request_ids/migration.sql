-- The X-Request-Id of the requests whose changes a batch carries, so a batch the sweeper
-- republishes still names them in the logs of the tiers that handle it.
ALTER TABLE "event_outbox" ADD COLUMN "request_ids" TEXT[];

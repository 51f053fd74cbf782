-- Spectators (Zulip's feature level 109): an organization lets people who are not logged in read
-- its web-public streams only when it turns this on, and the server allows web-public streams
-- (WEB_PUBLIC_STREAMS_ENABLED). Off by default, as in Zulip. Streams have had is_web_public since 0001.
ALTER TABLE "realm" ADD COLUMN "enable_spectator_access" BOOLEAN NOT NULL DEFAULT false;

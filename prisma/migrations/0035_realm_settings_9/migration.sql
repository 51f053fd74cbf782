-- Organization settings Zulip added up to 9.0 that are not permissions (feature levels 128, 129,
-- 212, 216, 242, 246, 55 and 195): what clients show, and one rule on names. Defaults are Zulip's.
ALTER TABLE "realm" ADD COLUMN "org_type" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "realm" ADD COLUMN "want_advertise_in_communities_directory" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "realm" ADD COLUMN "jitsi_server_url" TEXT;
ALTER TABLE "realm" ADD COLUMN "enable_guest_user_indicator" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "realm" ADD COLUMN "require_unique_names" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "realm" ADD COLUMN "giphy_rating" INTEGER NOT NULL DEFAULT 2;
ALTER TABLE "realm" ADD COLUMN "default_code_block_language" TEXT NOT NULL DEFAULT '';
ALTER TABLE "realm" ADD COLUMN "zulip_update_announcements_stream_id" INTEGER;

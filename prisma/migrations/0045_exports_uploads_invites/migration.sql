-- Zulip 10.0's exports with consent, resumable uploads and invitations into groups.
--
-- allow_private_data_export (feature level 293): whether the organization's administrators may
-- include the user's private data (direct messages, private channels) in a full export.
-- realm_export.export_type (feature level 304): 1 public data, 2 full with members' consent.
-- invite.group_ids (feature level 322): the user groups an invited user joins on accepting.
-- tus_upload (feature level 295): a resumable upload in progress (the tus protocol at
-- /api/v1/tus); its bytes are kept in file storage, one object a PATCH, until it completes.

ALTER TABLE "user_profile" ADD COLUMN "allow_private_data_export" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "realm_export" ADD COLUMN "export_type" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "invite" ADD COLUMN "group_ids" INTEGER[] DEFAULT '{}';

CREATE TABLE "tus_upload" (
  "id" TEXT PRIMARY KEY,
  "realm_id" INTEGER NOT NULL REFERENCES "realm"("id") ON DELETE CASCADE,
  "user_id" INTEGER NOT NULL REFERENCES "user_profile"("id") ON DELETE CASCADE,
  "length" BIGINT NOT NULL,
  "offset" BIGINT NOT NULL DEFAULT 0,
  "parts" INTEGER NOT NULL DEFAULT 0,
  "filename" TEXT NOT NULL,
  "filetype" TEXT,
  "metadata" TEXT NOT NULL DEFAULT '',
  "busy_until" TIMESTAMPTZ(6),
  "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
  "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now()
);
CREATE INDEX "tus_upload_user_id_idx" ON "tus_upload"("user_id");
CREATE INDEX "tus_upload_updated_at_idx" ON "tus_upload"("updated_at");

-- Files live in storage (packages/storage), not in rows: any node reads them from the disk or
-- the bucket every node shares.
ALTER TABLE "attachment" DROP COLUMN "content";
ALTER TABLE "realm_emoji" DROP COLUMN "content";

-- The realm's upload space (a sum over its attachments) and the worker's sweep of old
-- unreferenced uploads.
CREATE INDEX "attachment_realm_id_idx" ON "attachment"("realm_id");
CREATE INDEX "attachment_create_time_idx" ON "attachment"("create_time");

-- Secrets every node of a cluster shares, made once by whichever node needs one first (the key
-- that signs temporary file URLs).
CREATE TABLE "server_secret" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    CONSTRAINT "server_secret_pkey" PRIMARY KEY ("name")
);

-- Organization data exports (POST /export/realm; Zulip keeps them as RealmAuditLog rows of type
-- REALM_EXPORTED with a JSON extra_data, we give them a table). A row is pending until the worker
-- sets export_path (done) or failed_timestamp; deleting one keeps the row with deleted_timestamp,
-- as Zulip's list still shows it. Rows go with their organization.
CREATE TABLE "realm_export" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "acting_user_id" INTEGER,
    "export_time" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "export_path" TEXT,
    "export_size" BIGINT,
    "failed_timestamp" TIMESTAMPTZ(6),
    "deleted_timestamp" TIMESTAMPTZ(6),
    CONSTRAINT "realm_export_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "realm_export_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE,
    CONSTRAINT "realm_export_acting_user_id_fkey" FOREIGN KEY ("acting_user_id") REFERENCES "user_profile"("id") ON DELETE SET NULL
);
CREATE INDEX "realm_export_realm_id_export_time_idx" ON "realm_export"("realm_id", "export_time");

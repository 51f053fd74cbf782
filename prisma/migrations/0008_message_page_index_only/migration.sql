-- A stream or topic narrow's page query reads only each message's id and cache_version (the rest
-- comes from the node's message cache). With realm_id and cache_version in these two indexes it is
-- an index-only scan that visits no heap page per message. The topic index also holds subject
-- itself: Postgres scans an expression index (upper(subject)) index-only only when the column the
-- expression reads is in the index too. (Prisma's schema language has no INCLUDE; `prisma migrate
-- diff` would report these as drift, which is expected.)
DROP INDEX "message_recipient_id_id_idx";
CREATE INDEX "message_recipient_id_id_idx" ON "message"("recipient_id", "id") INCLUDE ("realm_id", "cache_version");

DROP INDEX "message_recipient_id_upper_subject_id_idx";
CREATE INDEX "message_recipient_id_upper_subject_id_idx" ON "message"("recipient_id", upper("subject"), "id") INCLUDE ("realm_id", "cache_version", "subject");

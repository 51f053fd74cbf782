-- Sending matches a message against its realm's alert words once (not once per recipient), so it
-- reads them by realm.
CREATE INDEX "alert_word_realm_id_idx" ON "alert_word"("realm_id");

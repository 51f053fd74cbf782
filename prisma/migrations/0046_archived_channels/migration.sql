-- Zulip 10.0's archived channels (feature levels 315, 323).
--
-- Archiving a channel (DELETE /streams/{id}) now keeps its name, its privacy and its
-- subscriptions; `deactivated` means archived. Channels deactivated before were renamed
-- `!DEACTIVATED:<id>:<name>`: they get their name back where no other channel of the organization
-- has it (case-insensitively), the newest such channel first, as Zulip's own migration did; the rest
-- keep the prefixed name. Their privacy (made private when deactivated) and subscriptions (ended)
-- are not restored: nothing says what they were.
WITH candidates AS (
  SELECT id, realm_id, substring(name FROM '^!DEACTIVATED:[0-9]+:(.*)$') AS old_name
  FROM "stream"
  WHERE deactivated AND name ~ '^!DEACTIVATED:[0-9]+:.'
), free AS (
  SELECT c.id, c.old_name,
         row_number() OVER (PARTITION BY c.realm_id, lower(c.old_name) ORDER BY c.id DESC) AS rank
  FROM candidates c
  WHERE NOT EXISTS (SELECT 1 FROM "stream" s WHERE s.realm_id = c.realm_id AND lower(s.name) = lower(c.old_name))
)
UPDATE "stream" s SET name = free.old_name FROM free WHERE s.id = free.id AND free.rank = 1;

-- Whether the channel had messages in the last 180 days (Zulip's is_recently_active, feature level
-- 323): kept by the worker, set again by a message sent to it.
ALTER TABLE "stream" ADD COLUMN "is_recently_active" BOOLEAN NOT NULL DEFAULT true;
UPDATE "stream" st SET is_recently_active = EXISTS (
  SELECT 1 FROM "message" m WHERE m.recipient_id = st.recipient_id AND m.date_sent > now() - interval '180 days'
);

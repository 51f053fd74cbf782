-- Read receipts (Zulip's feature level 137): an organization shows who has read a message unless
-- it turns them off. Zulip turns them on for new organizations that are closed (invitation
-- required or email domains restricted); organizations that already exist get the same rule.
ALTER TABLE "realm" ADD COLUMN "enable_read_receipts" BOOLEAN NOT NULL DEFAULT true;
UPDATE "realm" SET "enable_read_receipts" = false WHERE NOT "invite_required" AND NOT "emails_restricted_to_domains";

-- POST /realm/deactivate (feature level 332): when a deactivated organization's data is deleted
-- (null: kept until an administrator of the server deletes it). The worker's sweep deletes it.
ALTER TABLE realm ADD COLUMN scheduled_deletion_date TIMESTAMPTZ(6);

-- The mergeBy names a record's merge key is made of (JSON), so a PATCH of those properties moves the
-- key with them. NULL for a child known by its content, and for records written before it was kept.
ALTER TABLE {schema}.records ADD COLUMN merge_identity TEXT;

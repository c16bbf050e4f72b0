-- A version stores only the blocks it changed: `delta` is a list of entries [id] (removed),
-- [id, after] (moved after `after`, null for first) or [id, after, text] (new or rewritten). Now and
-- then a version keeps the whole list in `blocks` instead, as before (a checkpoint); every version
-- written before this migration is one, so old rows read as they are.
ALTER TABLE pad_versions ALTER COLUMN blocks DROP NOT NULL;
ALTER TABLE pad_versions ADD COLUMN delta jsonb;
ALTER TABLE pad_versions ADD CONSTRAINT pad_versions_list CHECK ((blocks IS NULL) <> (delta IS NULL));

-- Every edit sets pads.updated_at; with no index over it that update stays a HOT update, which
-- writes the row again and no index entry. The hub listing orders on an expression over the union
-- of threads and pads, so it used this index for hub_id alone.
DROP INDEX pads_hub_updated;
CREATE INDEX pads_hub ON pads (hub_id);

-- A version stores only the blocks it changed: `delta` is a list of entries [id] (removed),
-- [id, after] (moved after `after`, null for first) or [id, after, text] (new or rewritten). Now and
-- then a version keeps the whole list in `blocks` instead, as before (a checkpoint); every version
-- written before this migration is one, so old rows read as they are.
ALTER TABLE pad_versions ALTER COLUMN blocks DROP NOT NULL;
ALTER TABLE pad_versions ADD COLUMN delta jsonb;
ALTER TABLE pad_versions ADD CONSTRAINT pad_versions_list CHECK ((blocks IS NULL) <> (delta IS NULL));
-- A version that only rewrites blocks in place leaves `changed` null: its delta names them.
ALTER TABLE pad_versions ALTER COLUMN changed DROP NOT NULL;
-- Versions are history: they keep the id of whoever wrote them as written, without taking a lock on
-- that participant's row on every edit.
ALTER TABLE pad_versions DROP CONSTRAINT pad_versions_actor_id_fkey;

-- Every edit sets pads.updated_at; with no index over it that update stays a HOT update, which
-- writes the row again and no index entry. The hub listing orders on an expression over the union
-- of threads and pads, so it used this index for hub_id alone.
DROP INDEX pads_hub_updated;
CREATE INDEX pads_hub ON pads (hub_id);

-- An edit's id names its version (pad and number), so new versions need no edit_id of their own;
-- the ids made before stay findable, and only they are indexed.
ALTER TABLE pad_versions DROP CONSTRAINT pad_versions_edit_id_key;
CREATE UNIQUE INDEX pad_versions_edit_id ON pad_versions (edit_id) WHERE edit_id IS NOT NULL;

-- Each block's last writer is the latest version that changed it: read from the versions, not
-- written again beside them on every edit.
DROP TABLE pad_block_authors;
CREATE VIEW pad_block_authors AS
  SELECT DISTINCT ON (v.pad_id, c.block_id) v.pad_id, c.block_id, v.actor_id, v.actor_kind, v.version
  FROM pad_versions v
  CROSS JOIN LATERAL unnest(coalesce(v.changed, ARRAY(SELECT e->>0 FROM jsonb_array_elements(v.delta) AS e))) AS c(block_id)
  ORDER BY v.pad_id, c.block_id, v.version DESC;

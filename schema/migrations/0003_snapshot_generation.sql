-- Each write of a pad's snapshot raises its generation. A compaction replaces the snapshot only if
-- it is still the generation it folded from: `upto` alone could come back to a value it had before.
ALTER TABLE pad_snapshots ADD COLUMN generation bigint NOT NULL DEFAULT 1;

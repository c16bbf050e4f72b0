-- A version can restore an earlier one: the pad's blocks as they were then, written as a new
-- version on top by the person restoring (undoable like any edit). `restored` names the version it
-- brought back, for history to say so.
ALTER TABLE pad_versions DROP CONSTRAINT pad_versions_kind_check;
ALTER TABLE pad_versions ADD CONSTRAINT pad_versions_kind_check CHECK (kind IN ('create', 'edit', 'undo', 'live', 'restore'));
ALTER TABLE pad_versions ADD COLUMN restored integer;

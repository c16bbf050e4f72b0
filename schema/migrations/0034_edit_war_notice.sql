-- Edit wars (SPEC part 3 "Edit war"): the hub's owner and helpers are told in their inbox when a
-- section starts taking suggestions only. The kind joins whatever kinds the check already names (other
-- migrations of the same issue may add theirs), so the order these apply in does not matter.
DO $$
DECLARE def text;
BEGIN
  SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint WHERE conname = 'inbox_items_kind_check';
  IF position('''edit_war''' IN def) = 0 THEN
    EXECUTE 'ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check';
    EXECUTE 'ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check ' || replace(def, 'ARRAY[', 'ARRAY[''edit_war''::text, ');
  END IF;
END $$;

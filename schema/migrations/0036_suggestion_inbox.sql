-- Checked hubs: a hub's owner and helpers are told in their inbox when a suggestion waits for a
-- check (`suggestion`). The kind joins whatever kinds the check already names.
DO $$
DECLARE def text;
BEGIN
  SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint WHERE conname = 'inbox_items_kind_check';
  IF position('''suggestion''' IN def) = 0 THEN
    EXECUTE 'ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check';
    EXECUTE 'ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check ' || replace(def, 'ARRAY[', 'ARRAY[''suggestion''::text, ');
  END IF;
END $$;

-- An owner's or helper's edit may settle flags (an accepted fix): it was always written in a
-- transaction that first looked for the pad's open flags, five statements where anyone else's edit
-- takes one. Owners and helpers are most of the editors of a hub of their own, and most pads have no
-- open flag. Their edits are now written by one statement like anyone's, which refuses itself
-- (DP409) when one of its pads has an open flag: only then is the edit written again in a
-- transaction that settles what it fixed (sync/editEngine.ts). The statement sees the flags as the
-- transaction's first statement saw them.
CREATE FUNCTION pad_flags_refuse(pad_ids text[]) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM threads WHERE about_pad_id = ANY(pad_ids) AND flag = 'open') THEN
    RAISE EXCEPTION 'a pad of this write has an open flag' USING ERRCODE = 'DP409';
  END IF;
  RETURN 0;
END $$;

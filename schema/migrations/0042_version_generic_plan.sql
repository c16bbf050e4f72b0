-- A pad edit's version statement (sync/versions.ts) is prepared once per connection, but Postgres
-- planned it again on every edit (about 0.3 ms, as much as running it): its generic plan looked dearer
-- than a custom one, because an array parameter is taken for ten rows (unnest, = ANY) and each of
-- them for an index probe. The edit's section lists are one or two entries. Read through these
-- functions, which say one row (ROWS 1; PL/pgSQL, so never inlined into the statement), the generic
-- plan costs what a custom one does, and Postgres keeps it after its first five runs.
CREATE FUNCTION section_moves(ids text[], afters text[], titles text[], levels int4[])
  RETURNS TABLE (id text, after text, title text, level int4)
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 1 AS $$
BEGIN
  RETURN QUERY SELECT * FROM unnest(ids, afters, titles, levels);
END $$;

CREATE FUNCTION text_list(items text[]) RETURNS SETOF text
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 1 AS $$
BEGIN
  RETURN QUERY SELECT unnest(items);
END $$;

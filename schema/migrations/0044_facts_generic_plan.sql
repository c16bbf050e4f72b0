-- The limits' facts (server/core/limits/paceRules.ts `factsOf`) are one prepared statement over the
-- writes asked, but Postgres planned it again on every run: its generic plan took each array
-- parameter for ten rows, each a probe of several indexes, and looked dearer than a custom plan of
-- the one or few writes really asked. Measured under the durable edit benchmark, planning took
-- 0.65 ms of every run against 0.07 ms of running it. Read through this function, which says one row
-- (ROWS 1, PL/pgSQL so never inlined), the generic plan costs what a custom one does, and Postgres
-- keeps it after its first five runs, as for the version statement (migration 0042).
CREATE FUNCTION facts_asked(actor_ids text[], agents boolean[], humans text[], hubs text[], threads text[], shares boolean[])
  RETURNS TABLE (actor_id text, agent boolean, human text, hub text, thread text, with_shared boolean, i bigint)
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 1 AS $$
BEGIN
  RETURN QUERY SELECT * FROM unnest(actor_ids, agents, humans, hubs, threads, shares) WITH ORDINALITY;
END $$;

-- Durable pad edits made at the same moment are written by one statement (sync/versionGroup.ts), each
-- edit's windows counted as pace_count_or_refuse counts one edit's (migration 0043). The edits' rules
-- come in one list, edit e's at rule_from[e] for rule_count[e] entries, and only the edits in
-- `counted` (those whose version was made) count. Every lock of the statement is taken first, in one
-- order, as a single write takes its own: two such statements, or one and a single write, never
-- wait on each other in a circle. A full window fails the whole statement (DP429); its writer sends
-- each edit again on its own, which names the refusal.
CREATE FUNCTION pace_count_or_refuse_many(counted integer[], rule_from integer[], rule_count integer[], rule_keys text[],
    rule_max bigint[], rule_window bigint[], rule_place text[], rule_weight bigint[], rule_bucket bigint[], at_ms bigint[])
  RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  e integer;
  f integer;
  t integer;
  refused jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(k, 0))
    FROM (SELECT DISTINCT rule_keys[j] AS k FROM unnest(counted) AS c(e), generate_series(rule_from[c.e], rule_from[c.e] + rule_count[c.e] - 1) AS j ORDER BY 1) s;
  FOREACH e IN ARRAY counted LOOP
    CONTINUE WHEN rule_count[e] = 0;
    f := rule_from[e];
    t := f + rule_count[e] - 1;
    refused := pace_full('{}', rule_keys[f:t], rule_max[f:t], rule_window[f:t], rule_place[f:t], rule_weight[f:t], rule_bucket[f:t], at_ms[e], true, false);
    IF refused IS NOT NULL THEN
      RAISE EXCEPTION 'pace windows full' USING ERRCODE = 'DP429', DETAIL = refused::text;
    END IF;
  END LOOP;
  RETURN coalesce(array_length(counted, 1), 0);
END $$;

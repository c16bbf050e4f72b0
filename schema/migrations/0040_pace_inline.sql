-- A counted write's windows, counted inside another statement (a pad edit's version, migration 0040):
-- pace_windows in counting mode, and when any window is full, an error that rolls the whole statement
-- back, its SQLSTATE DP429 and its detail the full windows as [[i, free_at], ...] (1-based into the
-- rules, as pace_windows answers them), for the server to turn into its 429.
CREATE FUNCTION pace_count_or_refuse(lock_keys text[], rule_keys text[], rule_max bigint[], rule_window bigint[], rule_place text[],
    rule_weight bigint[], rule_bucket bigint[], at_ms bigint)
  RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  refused jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_array(w.i, w.free_at)) INTO refused
    FROM pace_windows(lock_keys, rule_keys, rule_max, rule_window, rule_place, rule_weight, rule_bucket, at_ms, true, false) w;
  IF refused IS NOT NULL THEN
    RAISE EXCEPTION 'pace windows full' USING ERRCODE = 'DP429', DETAIL = refused::text;
  END IF;
  RETURN coalesce(array_length(rule_keys, 1), 0);
END $$;

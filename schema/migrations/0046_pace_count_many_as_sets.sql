-- pace_count_or_refuse_many (migration 0045) counted a group's edits one after another through
-- pace_full: two statements per window per edit, each started anew. A group of 24 edits with three
-- windows each ran about 150 statements inside the group's one, a third of its time in Postgres.
--
-- The windows the group's edits count in are now looked at and written as sets, per key, whatever the
-- number of edits: one statement looks at every ring window (a count of writes, at most 128) and
-- every window of amounts, one writes the rings, and two write the amounts. Windows of distinct
-- places and of more than 128 writes, which no pad edit counts in, are still counted edit by edit.
--
-- A key's window is looked at from the earliest of its edits' times, with all of the group's writes
-- to it counted at once. That is the same answer the edits one by one would give, or a refusal a few
-- milliseconds early at the edge of a window; either way the whole group is refused (DP429), and its
-- writer sends each edit again on its own (sync/versionGroup.ts), where every refusal is exact and
-- named. The locks are taken first in one order, as before.
CREATE OR REPLACE FUNCTION pace_count_or_refuse_many(counted integer[], rule_from integer[], rule_count integer[], rule_keys text[],
    rule_max bigint[], rule_window bigint[], rule_place text[], rule_weight bigint[], rule_bucket bigint[], at_ms bigint[])
  RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  ring_max constant bigint := 128;
  empty constant bigint := -9223372036854775808;
  full_keys text[];
  rings bigint;
  amounts bigint;
  others integer[];
  e integer;
  js integer[];
  refused jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(k, 0))
    FROM (SELECT DISTINCT rule_keys[j] AS k FROM unnest(counted) AS c(e), generate_series(rule_from[c.e], rule_from[c.e] + rule_count[c.e] - 1) AS j ORDER BY 1) s;

  -- Each key's window, from the earliest of its writes: full when the writes already in it and the
  -- group's writes to it pass its max (for amounts, their sum).
  WITH r AS (
      SELECT c.e, rule_keys[j] AS key, rule_max[j] AS mx, at_ms[c.e] - rule_window[j] AS since, rule_weight[j] AS weight,
        CASE WHEN rule_place[j] IS NOT NULL THEN 'other' WHEN rule_bucket[j] > 0 THEN 'amount' WHEN rule_max[j] <= ring_max THEN 'ring' ELSE 'other' END AS kind
      FROM unnest(counted) AS c(e), generate_series(rule_from[c.e], rule_from[c.e] + rule_count[c.e] - 1) AS j),
    k AS (
      SELECT key, kind, min(since) AS since, min(mx) AS mx, count(*) AS n, sum(weight) AS weight FROM r WHERE kind <> 'other' GROUP BY key, kind)
  SELECT
    (SELECT array_agg(k.key ORDER BY k.key) FROM k WHERE CASE WHEN k.kind = 'amount'
      THEN coalesce((SELECT sum(m.weight) FROM pace_marks m WHERE m.key = k.key AND m.at > k.since), 0) + k.weight > k.mx
      ELSE k.n + (SELECT count(*) FROM pace_marks m WHERE m.key = k.key AND m.at > k.since)
        + (SELECT count(*) FROM pace_rings g CROSS JOIN LATERAL unnest(g.marks) AS x(at) WHERE g.key = k.key AND x.at > k.since) > k.mx END),
    (SELECT count(*) FROM k WHERE kind = 'ring'),
    (SELECT count(*) FROM k WHERE kind = 'amount'),
    (SELECT array_agg(DISTINCT r.e) FROM r WHERE kind = 'other')
    INTO full_keys, rings, amounts, others;
  IF full_keys IS NOT NULL THEN
    RAISE EXCEPTION 'pace windows full' USING ERRCODE = 'DP429', DETAIL = to_jsonb(full_keys)::text;
  END IF;

  IF rings > 0 THEN
    -- A ring keeps its key's newest marks, as many as its max: the group's writes take its oldest slots
    -- (a ring shorter than the max, or none yet, grows to it, its free slots the smallest bigint).
    INSERT INTO pace_rings AS g (key, marks)
    SELECT w.key, array_fill(empty, ARRAY[greatest(w.mx - w.n, 0)::int]) || w.ats FROM (
        SELECT rule_keys[j] AS key, min(rule_max[j]) AS mx, count(*) AS n, array_agg(at_ms[c.e] ORDER BY at_ms[c.e]) AS ats
        FROM unnest(counted) AS c(e), generate_series(rule_from[c.e], rule_from[c.e] + rule_count[c.e] - 1) AS j
        WHERE rule_place[j] IS NULL AND rule_bucket[j] = 0 AND rule_max[j] <= ring_max
        GROUP BY 1) w
    ON CONFLICT (key) DO UPDATE SET marks = ARRAY(
      SELECT x.at FROM unnest(g.marks || excluded.marks) AS x(at)
      ORDER BY x.at DESC LIMIT greatest(array_length(g.marks, 1), array_length(excluded.marks, 1)));
  END IF;

  IF amounts > 0 THEN
    -- Each key's buckets past its window go; each bucket the group writes to takes their amounts.
    DELETE FROM pace_marks m USING (
        SELECT rule_keys[j] AS key, min(at_ms[c.e] - rule_window[j]) AS since
        FROM unnest(counted) AS c(e), generate_series(rule_from[c.e], rule_from[c.e] + rule_count[c.e] - 1) AS j
        WHERE rule_place[j] IS NULL AND rule_bucket[j] > 0
        GROUP BY 1) d
      WHERE m.key = d.key AND m.at <= d.since;
    WITH s AS (
        SELECT rule_keys[j] AS key, at_ms[c.e] - at_ms[c.e] % rule_bucket[j] AS bucket, sum(rule_weight[j]) AS weight
        FROM unnest(counted) AS c(e), generate_series(rule_from[c.e], rule_from[c.e] + rule_count[c.e] - 1) AS j
        WHERE rule_place[j] IS NULL AND rule_bucket[j] > 0
        GROUP BY 1, 2),
      added AS (
        UPDATE pace_marks m SET weight = m.weight + s.weight FROM s WHERE m.key = s.key AND m.at = s.bucket RETURNING m.key, m.at)
    INSERT INTO pace_marks (key, at, place, weight)
    SELECT s.key, s.bucket, NULL, s.weight FROM s WHERE NOT EXISTS (SELECT 1 FROM added a WHERE a.key = s.key AND a.at = s.bucket);
  END IF;

  -- Windows of distinct places, or of more than 128 writes: each edit's as pace_count_or_refuse counts them.
  FOREACH e IN ARRAY coalesce(others, '{}') LOOP
    SELECT array_agg(j ORDER BY j) INTO js FROM generate_series(rule_from[e], rule_from[e] + rule_count[e] - 1) AS j
      WHERE rule_place[j] IS NOT NULL OR (rule_bucket[j] = 0 AND rule_max[j] > ring_max);
    refused := pace_full('{}', ARRAY(SELECT rule_keys[j] FROM unnest(js) AS j), ARRAY(SELECT rule_max[j] FROM unnest(js) AS j),
      ARRAY(SELECT rule_window[j] FROM unnest(js) AS j), ARRAY(SELECT rule_place[j] FROM unnest(js) AS j),
      ARRAY(SELECT rule_weight[j] FROM unnest(js) AS j), ARRAY(SELECT rule_bucket[j] FROM unnest(js) AS j), at_ms[e], true, false);
    IF refused IS NOT NULL THEN
      RAISE EXCEPTION 'pace windows full' USING ERRCODE = 'DP429', DETAIL = refused::text;
    END IF;
  END LOOP;
  RETURN coalesce(array_length(counted, 1), 0);
END $$;

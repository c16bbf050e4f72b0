-- pace_count_or_refuse (migration 0040) read pace_windows' rows through a statement of its own, an
-- aggregate over the set-returning function, its rows first kept in a tuple store: about a twentieth
-- of what a pad edit's windows cost the backend. The windows are now counted by pace_full, which answers the
-- full ones as the refusal's detail has them ([[i, free_at], ...] in rule order, or null when none
-- is), and pace_count_or_refuse takes it as a plain expression. pace_windows answers the same rows
-- from it. The locks, reads and writes are those of migration 0039, statement for statement.
--
-- Measured and left as they were: one statement reading every rule's window (as subqueries of one
-- statement) and one updating every ring cost more than the statements they replace, as each plan
-- node's start-up, paid on every call, weighs more than a statement's own overhead.
CREATE FUNCTION pace_full(lock_keys text[], rule_keys text[], rule_max bigint[], rule_window bigint[], rule_place text[],
    rule_weight bigint[], rule_bucket bigint[], at_ms bigint, counting boolean, always boolean)
  RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  n integer := coalesce(array_length(rule_keys, 1), 0);
  ring_max constant bigint := 128;
  empty constant bigint := -9223372036854775808;
  since bigint;
  full_at bigint;
  refused jsonb;
BEGIN
  IF counting THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(k, 0))
      FROM (SELECT DISTINCT k FROM unnest(lock_keys || rule_keys) AS u(k) ORDER BY 1) s;
  END IF;
  FOR j IN 1..n LOOP
    since := at_ms - rule_window[j];
    full_at := NULL;
    IF rule_place[j] IS NOT NULL THEN
      -- Distinct places: one already counted takes no new place.
      IF NOT EXISTS (SELECT 1 FROM pace_marks m WHERE m.key = rule_keys[j] AND m.at > since AND m.place = rule_place[j]) THEN
        SELECT max(m.at) INTO full_at FROM pace_marks m WHERE m.key = rule_keys[j] AND m.at > since
          GROUP BY m.place ORDER BY 1 DESC OFFSET rule_max[j] - 1 LIMIT 1;
      END IF;
    ELSIF rule_bucket[j] = 0 THEN
      -- The max-th newest write in the window, of the key's rows and its ring: while it is in, the window is full.
      SELECT w.at INTO full_at FROM (
          SELECT m.at FROM pace_marks m WHERE m.key = rule_keys[j] AND m.at > since
          UNION ALL
          SELECT r.at FROM pace_rings g CROSS JOIN LATERAL unnest(g.marks) AS r(at) WHERE g.key = rule_keys[j] AND r.at > since) w
        ORDER BY w.at DESC OFFSET rule_max[j] - 1 LIMIT 1;
    ELSE
      -- Amounts, newest first: the bucket whose leaving makes room for this write's amount.
      SELECT r.at INTO full_at FROM (
          SELECT m.at, sum(m.weight) OVER (ORDER BY m.at DESC ROWS UNBOUNDED PRECEDING) AS total
          FROM pace_marks m WHERE m.key = rule_keys[j] AND m.at > since) r
        WHERE r.total + rule_weight[j] > rule_max[j] ORDER BY r.at DESC LIMIT 1;
      -- An amount past the max on its own passes even an empty window: it frees when its own bucket leaves.
      IF full_at IS NULL AND rule_weight[j] > rule_max[j] THEN
        full_at := at_ms - at_ms % rule_bucket[j];
      END IF;
    END IF;
    IF full_at IS NOT NULL THEN
      refused := coalesce(refused, '[]'::jsonb) || jsonb_build_array(jsonb_build_array(j, full_at + rule_window[j]));
    END IF;
  END LOOP;
  IF counting AND (always OR refused IS NULL) AND n > 0 THEN
    FOR j IN 1..n LOOP
      IF rule_place[j] IS NULL AND rule_bucket[j] = 0 AND rule_max[j] <= ring_max THEN
        -- The oldest slot takes this write; a ring shorter than the max (or none yet) grows to it.
        UPDATE pace_rings g SET marks[(SELECT u.k FROM unnest(g.marks) WITH ORDINALITY AS u(at, k) ORDER BY u.at LIMIT 1)] = at_ms
          WHERE g.key = rule_keys[j] AND array_length(g.marks, 1) >= rule_max[j];
        CONTINUE WHEN FOUND;
        INSERT INTO pace_rings AS g (key, marks) VALUES (rule_keys[j], array_fill(empty, ARRAY[rule_max[j]::int - 1]) || at_ms)
          ON CONFLICT (key) DO UPDATE SET marks = g.marks || array_fill(empty, ARRAY[rule_max[j]::int - array_length(g.marks, 1) - 1]) || at_ms;
        CONTINUE;
      END IF;
      -- Each key's rows past its window, through the (key, at) index (migration 0023).
      DELETE FROM pace_marks m WHERE m.key = rule_keys[j] AND m.at <= at_ms - rule_window[j];
      IF rule_bucket[j] > 0 THEN
        UPDATE pace_marks m SET weight = m.weight + rule_weight[j] WHERE m.key = rule_keys[j] AND m.at = at_ms - at_ms % rule_bucket[j];
        CONTINUE WHEN FOUND;
        INSERT INTO pace_marks (key, at, place, weight) VALUES (rule_keys[j], at_ms - at_ms % rule_bucket[j], NULL, rule_weight[j]);
      ELSE
        INSERT INTO pace_marks (key, at, place, weight) VALUES (rule_keys[j], at_ms, rule_place[j], rule_weight[j]);
      END IF;
    END LOOP;
  END IF;
  RETURN refused;
END $$;

CREATE OR REPLACE FUNCTION pace_windows(lock_keys text[], rule_keys text[], rule_max bigint[], rule_window bigint[], rule_place text[],
    rule_weight bigint[], rule_bucket bigint[], at_ms bigint, counting boolean, always boolean)
  RETURNS TABLE (i integer, free_at bigint) LANGUAGE sql AS $$
  SELECT (e->>0)::integer, (e->>1)::bigint
    FROM jsonb_array_elements(pace_full(lock_keys, rule_keys, rule_max, rule_window, rule_place, rule_weight, rule_bucket, at_ms, counting, always)) e
$$;

CREATE OR REPLACE FUNCTION pace_count_or_refuse(lock_keys text[], rule_keys text[], rule_max bigint[], rule_window bigint[], rule_place text[],
    rule_weight bigint[], rule_bucket bigint[], at_ms bigint)
  RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  refused jsonb := pace_full(lock_keys, rule_keys, rule_max, rule_window, rule_place, rule_weight, rule_bucket, at_ms, true, false);
BEGIN
  IF refused IS NOT NULL THEN
    RAISE EXCEPTION 'pace windows full' USING ERRCODE = 'DP429', DETAIL = refused::text;
  END IF;
  RETURN coalesce(array_length(rule_keys, 1), 0);
END $$;

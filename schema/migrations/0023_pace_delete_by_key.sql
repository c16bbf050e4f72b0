-- pace_windows (migration 0022) dropped the rows that left their windows in one DELETE over every key
-- of the write. Inside the function its plan is generic, and the planner chose to scan pace_marks
-- whole with it, so each counted write cost more as the table grew. Now each key's old rows are
-- dropped by their own statement on the (key, at) index. Nothing else changes.
CREATE OR REPLACE FUNCTION pace_windows(lock_keys text[], rule_keys text[], rule_max bigint[], rule_window bigint[], rule_place text[],
    rule_weight bigint[], rule_bucket bigint[], at_ms bigint, counting boolean, always boolean)
  RETURNS TABLE (i integer, free_at bigint) LANGUAGE plpgsql AS $$
DECLARE
  n integer := coalesce(array_length(rule_keys, 1), 0);
  since bigint;
  full_at bigint;
  passes boolean := false;
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
      -- The max-th newest write in the window: while it is in, the window is full.
      SELECT m.at INTO full_at FROM pace_marks m WHERE m.key = rule_keys[j] AND m.at > since
        ORDER BY m.at DESC OFFSET rule_max[j] - 1 LIMIT 1;
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
      passes := true;
      i := j;
      free_at := full_at + rule_window[j];
      RETURN NEXT;
    END IF;
  END LOOP;
  IF counting AND (always OR NOT passes) AND n > 0 THEN
    FOR j IN 1..n LOOP
      -- Each key's rows past its window, through the (key, at) index: one statement for all the keys
      -- let a generic plan scan the whole table as it grew.
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
END $$;

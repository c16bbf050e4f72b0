-- A write's pace windows looked at, and counted, in one call (server/core/paceWindows.ts): a write
-- used to take a round trip per window, and more to lock and to record; now it takes one.
--
-- `weight` lets a window count amounts rather than writes (the characters of pad text saved a day):
-- such a window is full when what is in it plus this write's amount passes its max. Its marks are
-- kept in buckets (`bucket` milliseconds, a minute for the daily pad text), one row per bucket, so a
-- busy writer's day is at most 1,440 rows; a bucket leaves the window as a whole, at most a bucket
-- early. Windows of writes (weight 1, no bucket) are kept exactly, a row per write, as before.
ALTER TABLE pace_marks ADD COLUMN weight bigint NOT NULL DEFAULT 1;

-- The prune rule drops rows past the longest window across every key.
CREATE INDEX pace_marks_at ON pace_marks (at);

-- Each rule i is (rule_keys[i], rule_max[i], rule_window[i] ms, rule_place[i], rule_weight[i],
-- rule_bucket[i] ms). Answers one row (i, free_at) for each window this write would pass, with the
-- time it frees enough room. With `counting`, the locks of `lock_keys` and of every rule's key are
-- taken first, in one order everywhere (until the transaction ends), and when no window is full the
-- write is recorded in each, dropping the rows that have left their windows. With `always` it is
-- recorded even so (text typed live is in the pad already: it is counted, and the typist stopped after).
CREATE FUNCTION pace_windows(lock_keys text[], rule_keys text[], rule_max bigint[], rule_window bigint[], rule_place text[],
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
    DELETE FROM pace_marks m USING unnest(rule_keys, rule_window) AS u(k, w) WHERE m.key = u.k AND m.at <= at_ms - u.w;
    FOR j IN 1..n LOOP
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

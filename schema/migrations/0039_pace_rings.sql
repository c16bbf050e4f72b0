-- A counted write put a row in `pace_marks` for each window of writes it counts in, with an entry in
-- each of its two indexes, and later a delete: about 600 B of WAL a pad edit for its three windows.
--
-- A window of at most 128 writes (every per-participant and per-pad window at scale 1) now keeps its
-- marks in one row per key, `pace_rings`: the times of the key's newest writes, as many as the
-- window's max. A write overwrites the oldest slot in place, a heap-only update of eight bytes with no
-- index entry. The window is full while the oldest of its newest `max` marks is in it, so it answers
-- exactly as a row per write did, and frees at the same time. Windows of distinct places, of amounts
-- (`bucket`) and of more writes stay in `pace_marks`, read together with the ring of their key, so a
-- key whose window moves between the two (a test's scale changing) loses no mark either way.
CREATE TABLE pace_rings (
  key    text PRIMARY KEY,
  -- Epoch milliseconds; an empty slot holds the smallest bigint, which no window reaches.
  marks  bigint[] NOT NULL
);

-- The prune rule scans pace_marks whole every 10 minutes instead: an index entry on every mark cost
-- more than the scan.
DROP INDEX pace_marks_at;

CREATE OR REPLACE FUNCTION pace_windows(lock_keys text[], rule_keys text[], rule_max bigint[], rule_window bigint[], rule_place text[],
    rule_weight bigint[], rule_bucket bigint[], at_ms bigint, counting boolean, always boolean)
  RETURNS TABLE (i integer, free_at bigint) LANGUAGE plpgsql AS $$
DECLARE
  n integer := coalesce(array_length(rule_keys, 1), 0);
  ring_max constant bigint := 128;
  empty constant bigint := -9223372036854775808;
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
      passes := true;
      i := j;
      free_at := full_at + rule_window[j];
      RETURN NEXT;
    END IF;
  END LOOP;
  IF counting AND (always OR NOT passes) AND n > 0 THEN
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
END $$;

-- Pace state is kept out of the write-ahead log: a window's marks matter for a day at most, and a
-- write's marks cost more WAL than the rest of a pad edit's limits together. Unlogged tables are
-- transactional as any other (a write that rolls back takes its marks with it; the locks and counts
-- above are unchanged), but Postgres empties them when it recovers from a crash: every window then
-- starts empty, as it would for a server just installed (docs/choices.md "Limits").
ALTER TABLE pace_marks SET UNLOGGED;
ALTER TABLE pace_rings SET UNLOGGED;

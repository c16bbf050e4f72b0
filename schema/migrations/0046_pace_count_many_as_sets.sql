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
--
-- A ring now keeps its marks newest first, so that neither looking nor writing sorts it: the window
-- is full when the mark at the place of its max is in it, and a write puts its time in front and drops
-- the last, oldest, mark. A time older than the ring's newest (two instances' clocks, or two writers
-- that took their times in one order and their locks in the other, a few milliseconds apart) is
-- written as that newest, which keeps the order and at worst frees its place those milliseconds later.
UPDATE pace_rings SET marks = ARRAY(SELECT m FROM unnest(marks) AS m ORDER BY m DESC);

-- One write's windows (migration 0043), its ring written newest first.
CREATE OR REPLACE FUNCTION pace_full(lock_keys text[], rule_keys text[], rule_max bigint[], rule_window bigint[], rule_place text[],
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
        -- In front, the oldest dropped; a ring shorter than the max (or none yet) grows to it.
        UPDATE pace_rings g SET marks = greatest(at_ms, g.marks[1]) || g.marks[1:array_length(g.marks, 1) - 1]
          WHERE g.key = rule_keys[j] AND array_length(g.marks, 1) >= rule_max[j];
        CONTINUE WHEN FOUND;
        INSERT INTO pace_rings AS g (key, marks) VALUES (rule_keys[j], at_ms || array_fill(empty, ARRAY[rule_max[j]::int - 1]))
          ON CONFLICT (key) DO UPDATE SET marks = greatest(at_ms, g.marks[1]) || g.marks || array_fill(empty, ARRAY[rule_max[j]::int - array_length(g.marks, 1) - 1]);
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

-- A group's windows (migration 0045), as sets.
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
  -- group's writes to it pass its max (for amounts, their sum). A ring, newest first, holds at least
  -- `need` marks in the window when its mark at `need` is in it.
  WITH r AS (
      SELECT c.e, rule_keys[j] AS key, rule_max[j] AS mx, at_ms[c.e] - rule_window[j] AS since, rule_weight[j] AS weight,
        CASE WHEN rule_place[j] IS NOT NULL THEN 'other' WHEN rule_bucket[j] > 0 THEN 'amount' WHEN rule_max[j] <= ring_max THEN 'ring' ELSE 'other' END AS kind
      FROM unnest(counted) AS c(e), generate_series(rule_from[c.e], rule_from[c.e] + rule_count[c.e] - 1) AS j),
    k AS (
      SELECT key, kind, min(since) AS since, min(mx) AS mx, count(*) AS n, sum(weight) AS weight FROM r WHERE kind <> 'other' GROUP BY key, kind),
    looked AS (
      SELECT k.*, g.marks,
        CASE WHEN k.kind = 'amount' THEN coalesce((SELECT sum(m.weight) FROM pace_marks m WHERE m.key = k.key AND m.at > k.since), 0)
          ELSE (SELECT count(*) FROM pace_marks m WHERE m.key = k.key AND m.at > k.since) END AS marked
      FROM k LEFT JOIN pace_rings g ON g.key = k.key AND k.kind = 'ring')
  SELECT
    (SELECT array_agg(l.key ORDER BY l.key) FROM looked l WHERE CASE WHEN l.kind = 'amount' THEN l.marked + l.weight > l.mx
      ELSE l.mx - l.n - l.marked < 0 OR coalesce(l.marks[(l.mx - l.n - l.marked + 1)::int] > l.since, false) END),
    (SELECT count(*) FROM k WHERE kind = 'ring'),
    (SELECT count(*) FROM k WHERE kind = 'amount'),
    (SELECT array_agg(DISTINCT r.e) FROM r WHERE kind = 'other')
    INTO full_keys, rings, amounts, others;
  IF full_keys IS NOT NULL THEN
    RAISE EXCEPTION 'pace windows full' USING ERRCODE = 'DP429', DETAIL = to_jsonb(full_keys)::text;
  END IF;

  IF rings > 0 THEN
    -- A ring keeps its key's newest marks, newest first, as many as its max: the group's times go in
    -- front and as many of the oldest go (a ring shorter than the max, or none yet, grows to it, its
    -- free places the smallest bigint, last). Read under the keys' locks, written in one statement.
    INSERT INTO pace_rings AS g (key, marks)
    SELECT w.key, ring.marks[1:w.size] || array_fill(empty, ARRAY[greatest(w.size - cardinality(ring.marks), 0)]) FROM (
        SELECT rule_keys[j] AS key, greatest(min(rule_max[j])::int, coalesce(array_length(min(o.marks), 1), 0)) AS size,
          array_agg(at_ms[c.e] ORDER BY at_ms[c.e] DESC) AS ats, min(o.marks) AS old
        FROM unnest(counted) AS c(e), generate_series(rule_from[c.e], rule_from[c.e] + rule_count[c.e] - 1) AS j
          LEFT JOIN pace_rings o ON o.key = rule_keys[j]
        WHERE rule_place[j] IS NULL AND rule_bucket[j] = 0 AND rule_max[j] <= ring_max
        GROUP BY 1) w
      CROSS JOIN LATERAL (SELECT CASE WHEN w.old IS NULL OR w.ats[cardinality(w.ats)] >= w.old[1] THEN w.ats
          ELSE ARRAY(SELECT greatest(a, w.old[1]) FROM unnest(w.ats) AS a ORDER BY 1 DESC) END || coalesce(w.old, '{}') AS marks) ring
    ON CONFLICT (key) DO UPDATE SET marks = excluded.marks;
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

-- Search over pad sections and tasks, and the reads of the home (`show_dotpad`).

-- A pad's sections (a heading and the text up to the next one; "Introduction" before the first), kept
-- by the statement that records each version (sync/versions.ts): a version writes only the sections
-- it changed, a checkpoint all of them. `after_id` names the section before (null: the first), so a
-- section put in above others rewrites one neighbour, not every row after it.
CREATE TABLE pad_sections (
  pad_id      text NOT NULL REFERENCES pads (id),
  section_id  text NOT NULL,
  after_id    text,
  title       text NOT NULL,
  level       integer NOT NULL,
  body        text NOT NULL,
  -- The version that last changed the section.
  version     integer NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  search_tsv  tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', body), 'B')) STORED,
  PRIMARY KEY (pad_id, section_id)
);
CREATE INDEX pad_sections_search ON pad_sections USING gin (search_tsv);

-- Tasks by their title, details and state (a state's words: "in_review" reads as "in review").
ALTER TABLE tasks ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', details), 'B')
  || setweight(to_tsvector('simple', replace(state, '_', ' ')), 'C')) STORED;
CREATE INDEX tasks_search ON tasks USING gin (search_tsv);

-- The home's threads: those the caller posted in (a thread's starter wrote its first post).
CREATE INDEX posts_author_thread ON posts (author_id, thread_id, seq);
-- The Markdown /search lanes: threads newest first, open ones by their last activity.
CREATE INDEX threads_created ON threads (created_at DESC, id DESC);

-- The sections of the pads written before this migration, from each pad's latest block list: the
-- nearest checkpoint with the deltas after it folded in (as sync/blockLists.ts `applyDeltas` does).
-- A function, so a test can run it for one pad and compare with what its version writes kept.
CREATE FUNCTION rebuild_pad_sections(only_pad text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  written integer;
BEGIN
  DELETE FROM pad_sections WHERE only_pad IS NULL OR pad_id = only_pad;
  WITH RECURSIVE
  cp AS (
    SELECT DISTINCT ON (pad_id) pad_id, version, blocks FROM pad_versions
    WHERE blocks IS NOT NULL AND (only_pad IS NULL OR pad_id = only_pad)
    ORDER BY pad_id, version DESC),
  -- Every change to a block in order: the checkpoint's list (as placements), then each delta entry.
  changes AS (
    SELECT cp.pad_id, e.ref->>0 AS id, 3 AS arity, lag(e.ref->>0) OVER (PARTITION BY cp.pad_id ORDER BY e.ord) AS after,
           coalesce(t.text, '') AS text, cp.version, e.ord
    FROM cp CROSS JOIN LATERAL jsonb_array_elements(cp.blocks) WITH ORDINALITY AS e(ref, ord)
    LEFT JOIN pad_block_texts t ON t.pad_id = cp.pad_id AND t.hash = e.ref->>1
    UNION ALL
    SELECT d.pad_id, e.entry->>0, jsonb_array_length(e.entry),
           CASE WHEN jsonb_array_length(e.entry) = 3 THEN e.entry->>1 END,
           CASE jsonb_array_length(e.entry) WHEN 2 THEN e.entry->>1 WHEN 3 THEN e.entry->>2 END,
           d.version, e.ord
    FROM pad_versions d JOIN cp ON cp.pad_id = d.pad_id AND d.version > cp.version
    CROSS JOIN LATERAL jsonb_array_elements(d.delta) WITH ORDINALITY AS e(entry, ord)),
  -- Each block as its changes leave it: gone when the last one removed it; its text from the last
  -- rewrite or placement, its predecessor from the last placement.
  present AS (
    SELECT pad_id, id,
      (array_agg(after ORDER BY version DESC, ord DESC) FILTER (WHERE arity = 3))[1] AS after,
      (array_agg(text ORDER BY version DESC, ord DESC) FILTER (WHERE arity > 1))[1] AS text
    FROM changes GROUP BY pad_id, id
    HAVING (array_agg(arity ORDER BY version DESC, ord DESC))[1] > 1),
  walk AS (
    SELECT pad_id, id, text, 1 AS pos FROM present WHERE after IS NULL
    UNION ALL
    SELECT p.pad_id, p.id, p.text, w.pos + 1 FROM walk w JOIN present p ON p.pad_id = w.pad_id AND p.after = w.id),
  marked AS (
    SELECT pad_id, id, text, pos, substring(text FROM '^(#{1,6})(?:[[:blank:]]+|$)') AS hashes,
           count(*) FILTER (WHERE text ~ '^#{1,6}([[:blank:]]|$)') OVER (PARTITION BY pad_id ORDER BY pos) AS section_no
    FROM walk),
  grouped AS (
    SELECT pad_id, section_no, min(pos) AS first_pos,
      (array_agg(id ORDER BY pos))[1] AS section_id,
      (array_agg(hashes ORDER BY pos))[1] AS hashes,
      (array_agg(text ORDER BY pos))[1] AS first_text,
      coalesce(string_agg(text, E'\n\n' ORDER BY pos) FILTER (WHERE hashes IS NULL), '') AS body
    FROM marked GROUP BY pad_id, section_no)
  INSERT INTO pad_sections (pad_id, section_id, after_id, title, level, body, version)
  SELECT g.pad_id, g.section_id, lag(g.section_id) OVER (PARTITION BY g.pad_id ORDER BY g.first_pos),
    CASE WHEN g.hashes IS NULL THEN 'Introduction' ELSE btrim(regexp_replace(g.first_text, '^#{1,6}[[:blank:]]*', ''), E' \t\n') END,
    coalesce(length(g.hashes), 0), g.body, p.version
  FROM grouped g JOIN pads p ON p.id = g.pad_id;
  GET DIAGNOSTICS written = ROW_COUNT;
  RETURN written;
END $$;

SELECT rebuild_pad_sections(NULL);

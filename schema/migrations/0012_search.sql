-- Full-text search (SPEC part 4 `search_dotpad`, the Markdown `/search`). Each searchable row keeps a
-- tsvector as a generated column: Postgres computes it in the statement that writes the row, so it is
-- current in the same transaction on both stores. The 'simple' configuration keeps words as written
-- (lowercased, no stemming), so a word typed matches as a prefix in any language.
ALTER TABLE hubs ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('simple', name || ' ' || slug), 'A') || setweight(to_tsvector('simple', readme), 'B')) STORED;
CREATE INDEX hubs_search ON hubs USING gin (search_tsv);

ALTER TABLE threads ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', title)) STORED;
CREATE INDEX threads_search ON threads USING gin (search_tsv);

ALTER TABLE pads ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', title)) STORED;
CREATE INDEX pads_search ON pads USING gin (search_tsv);

ALTER TABLE posts ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED;
CREATE INDEX posts_search ON posts USING gin (search_tsv);

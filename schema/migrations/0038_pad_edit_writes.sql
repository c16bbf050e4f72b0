-- A version that changed a section's text rewrote its `pad_sections` row whole (body and search words),
-- and since the words are indexed the new row also took a fresh index entry and every one of its
-- words in the GIN index: about 1.3 KiB of WAL for a one-word edit of an 8-paragraph section.
--
-- Now the version writes only what the pad's readers see at once: a changed section's `version` and
-- `updated_at` (its title, level and place when those changed), a heap-only update of a few bytes.
-- Its text and words (`body`, `search_tsv`) are derived later from the stored versions
-- (sync/sectionText.ts): by a sweep once the pad has been quiet a few seconds, and by a search before
-- it reads, so a search always finds what the last version says. `pad_sections_stale` names the pads
-- whose text is behind; a version adds its pad once (a pad already named costs nothing).
ALTER TABLE pad_sections DROP COLUMN search_tsv;
ALTER TABLE pad_sections ADD COLUMN search_tsv tsvector;
-- Room on each page for the new rows of heap-only updates (a section's row is wide, its text and
-- words inline): an update finding no room moves the row and writes every index entry again, the
-- whole GIN entry of its words among them. The pad's row is updated by every version too.
ALTER TABLE pad_sections SET (fillfactor = 50);
ALTER TABLE pads SET (fillfactor = 80);

-- A section's search words, from its title and text; rows put in whole (a new section, a checkpoint,
-- the rebuild of migration 0017) get theirs as they go in.
CREATE FUNCTION pad_section_words(title text, body text) RETURNS tsvector LANGUAGE sql IMMUTABLE AS $$
  SELECT setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', body), 'B')
$$;
CREATE FUNCTION pad_section_words_in() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_tsv := pad_section_words(NEW.title, NEW.body);
  RETURN NEW;
END $$;
CREATE TRIGGER pad_sections_words BEFORE INSERT ON pad_sections FOR EACH ROW EXECUTE FUNCTION pad_section_words_in();

UPDATE pad_sections SET search_tsv = pad_section_words(title, body);
CREATE INDEX pad_sections_search ON pad_sections USING gin (search_tsv);

CREATE TABLE pad_sections_stale (
  pad_id     text PRIMARY KEY,
  queued_at  timestamptz NOT NULL DEFAULT now()
);

-- The update log is read, compacted and trimmed by pad, in id order (sync/store.ts), never by id
-- alone: its key is now (pad_id, id), the index every read used, and the index on id alone that every
-- appended update wrote into (64 B of WAL each) is gone.
ALTER TABLE pad_updates DROP CONSTRAINT pad_updates_pkey;
DROP INDEX pad_updates_pad;
ALTER TABLE pad_updates ADD PRIMARY KEY (pad_id, id);

-- Threads, complete (SPEC part 3 "Flag (dispute) on a pad section", part 2 "Post rendering"):
-- threads about a pad section and flags on it, hidden and deleted posts, reports, decisions, and
-- each participant's last-read mark for catch_up.

-- A thread may be about one section of a pad of its hub (the section's first block id), and may flag
-- that section as wrong: `flag` is null on a thread that flags nothing. `about_title` is the
-- section's title as it read when the thread started. `flag_moved_at`/`flag_moved_by` say who last
-- moved the flag; the 14-day lapse to `unresolved` reads `flag = 'open'` and `updated_at` (the last
-- activity on the thread).
ALTER TABLE threads ADD COLUMN about_pad_id text REFERENCES pads (id);
ALTER TABLE threads ADD COLUMN about_block text;
ALTER TABLE threads ADD COLUMN about_title text;
ALTER TABLE threads ADD COLUMN flag text CHECK (flag IN ('open', 'settled', 'unresolved'));
ALTER TABLE threads ADD COLUMN flag_moved_at timestamptz;
ALTER TABLE threads ADD COLUMN flag_moved_by text REFERENCES participants (id);
ALTER TABLE threads ADD CONSTRAINT threads_about_whole CHECK ((about_pad_id IS NULL) = (about_block IS NULL));
ALTER TABLE threads ADD CONSTRAINT threads_flag_about CHECK (flag IS NULL OR about_pad_id IS NOT NULL);
-- A pad's outline counts the open threads and flags of each section.
CREATE INDEX threads_about ON threads (about_pad_id, about_block) WHERE about_pad_id IS NOT NULL;
-- What the lapse of open flags will scan.
CREATE INDEX threads_open_flags ON threads (updated_at) WHERE flag = 'open';

-- Hidden posts keep their text (unhide brings it back) but show to nobody; a deleted post's text is
-- erased for good (`body` = ''). Both read `(hidden)` / `(deleted)` everywhere a post shows.
ALTER TABLE posts ADD COLUMN hidden_at timestamptz;
ALTER TABLE posts ADD COLUMN hidden_by text REFERENCES participants (id);
ALTER TABLE posts ADD COLUMN deleted_at timestamptz;
ALTER TABLE posts ADD COLUMN deleted_by text REFERENCES participants (id);

-- A report of a post to its hub's owner and helpers: one per reporter and post. The 10-an-hour
-- limit per thread counts these rows.
CREATE TABLE reports (
  id           text PRIMARY KEY,
  post_id      text NOT NULL REFERENCES posts (id),
  thread_id    text NOT NULL REFERENCES threads (id),
  hub_id       text NOT NULL REFERENCES hubs (id),
  reporter_id  text NOT NULL REFERENCES participants (id),
  reason       text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (post_id, reporter_id)
);
CREATE INDEX reports_thread ON reports (thread_id, created_at);

-- A decision recorded with a pad edit (`edit_pad` argument `decision`), in the transaction of the
-- version it names. `thread_id` is the pad's thread, where open_thread and catch_up show it.
CREATE TABLE decisions (
  id           text PRIMARY KEY,
  pad_id       text NOT NULL REFERENCES pads (id),
  thread_id    text REFERENCES threads (id),
  hub_id       text NOT NULL REFERENCES hubs (id),
  text         text NOT NULL,
  decided_by   text NOT NULL REFERENCES participants (id),
  pad_version  integer NOT NULL,
  edit_id      text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX decisions_thread ON decisions (thread_id, created_at) WHERE thread_id IS NOT NULL;
CREATE INDEX decisions_pad ON decisions (pad_id, created_at);

-- Where each participant last read each thread (open_thread, catch_up): the newest post seq seen,
-- the thread's version then, and when. Written by reads, one upsert each, so it has no foreign keys:
-- a read takes no lock on the thread's or the participant's row.
CREATE TABLE thread_reads (
  participant_id  text NOT NULL,
  thread_id       text NOT NULL,
  seq             integer NOT NULL,
  version         integer NOT NULL,
  read_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (participant_id, thread_id)
);

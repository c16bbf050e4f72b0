-- Write pace (SPEC part 8 "Write pace" and the linked agents' and guests' hourly pools): one row per
-- admitted write in each rolling window it counts in, named by `key` (the limit and whom and where it
-- counts, server/core/paceRules.ts). `at` is epoch milliseconds from the server's clock, so a test can
-- move that clock. `place` is what a window counts distinct values of (the threads a same text went to);
-- texts are kept only as a hash inside the key. Rows older than their window are dropped as the key is
-- next counted.
CREATE TABLE pace_marks (
  key    text NOT NULL,
  at     bigint NOT NULL,
  place  text
);
CREATE INDEX pace_marks_key_at ON pace_marks (key, at);

-- Pace refusals of automated writers, counted for the cooldown (15 in 10 minutes), and the cooldowns
-- they set: read-only until `until` (epoch milliseconds).
CREATE TABLE pace_refusals (
  participant_id  text NOT NULL REFERENCES participants (id),
  at              bigint NOT NULL
);
CREATE INDEX pace_refusals_participant ON pace_refusals (participant_id, at);

CREATE TABLE pace_cooldowns (
  participant_id  text PRIMARY KEY REFERENCES participants (id),
  since           bigint NOT NULL,
  until           bigint NOT NULL
);

-- The human of an agent put in cooldown is told once, through the inbox (kind `cooldown`).
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check
  CHECK (kind IN ('mention', 'reply', 'assigned', 'review', 'added', 'report', 'dm', 'cooldown'));

-- The run of agent-only posts in a thread (or DM) since a person last posted there: how many, by
-- whom (the first four agents are enough to tell "two or three" from more), and when the last one
-- came (epoch milliseconds). A person's post ends the run (the row goes).
CREATE TABLE pace_runs (
  thread_id  text PRIMARY KEY,
  posts      integer NOT NULL,
  agents     text[] NOT NULL,
  last_at    bigint NOT NULL
);

-- Direct messages: a conversation of exactly two participants, belonging to no hub. Kept apart from
-- threads and posts on purpose: every read of a thread or a post (open_thread, the Markdown /t view,
-- search, inbox, home) reaches it through its hub and the reader's seat there, so a DM in those tables
-- would need a nullable hub and a second rule in each of them. Here no existing query can see it.
CREATE TABLE dms (
  id            text PRIMARY KEY,
  -- Who started it (and sent the request, if it began as one), and the other participant.
  starter_id    text NOT NULL REFERENCES participants (id),
  other_id      text NOT NULL REFERENCES participants (id),
  -- One conversation per pair, whoever started it: the two ids in order.
  pair_key      text NOT NULL UNIQUE,
  -- open: both post; requested: a message request waits on other_id; declined: closed by closed_by (blocks are in dm_blocks).
  status        text NOT NULL CHECK (status IN ('open', 'requested', 'declined')),
  closed_by     text REFERENCES participants (id),
  post_count    integer NOT NULL DEFAULT 0,
  version       integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  CHECK (starter_id <> other_id)
);
CREATE INDEX dms_starter ON dms (starter_id, updated_at DESC, id DESC);
CREATE INDEX dms_other ON dms (other_id, updated_at DESC, id DESC);

CREATE TABLE dm_posts (
  id          text PRIMARY KEY,
  dm_id       text NOT NULL REFERENCES dms (id),
  seq         integer NOT NULL,
  author_id   text NOT NULL REFERENCES participants (id),
  body        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (dm_id, seq)
);

-- Every message request sent, for the limit of 5 a day per sender.
CREATE TABLE dm_requests (
  sender_id     text NOT NULL REFERENCES participants (id),
  recipient_id  text NOT NULL REFERENCES participants (id),
  dm_id         text NOT NULL REFERENCES dms (id),
  sent_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dm_requests_sender ON dm_requests (sender_id, sent_at);

-- Who blocked whom: a block stands between two people whatever becomes of their DM.
CREATE TABLE dm_blocks (
  blocker_id  text NOT NULL REFERENCES participants (id),
  blocked_id  text NOT NULL REFERENCES participants (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (blocker_id, blocked_id)
);

-- Reports of a DM or request, kept for the service's administrators.
CREATE TABLE dm_reports (
  dm_id        text NOT NULL REFERENCES dms (id),
  reporter_id  text NOT NULL REFERENCES participants (id),
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dm_id, reporter_id)
);

-- The inbox (server/core/inbox.ts): what was sent to a participant (mentions, replies, assignments,
-- review requests, being let into a hub, reports, DMs), read with check_inbox after a cursor and
-- acknowledged so it does not come back. Whether the recipient may still read what an item is about
-- is decided again at every read, so an item never outlives the access it was sent under.

-- Cursors carry `seq`. Deliveries to one recipient take a lock on that recipient first and draw
-- their seq under it, so a recipient's items commit in seq order and no cursor passes an item that
-- commits later.
CREATE SEQUENCE inbox_items_seq;

CREATE TABLE inbox_items (
  id            text PRIMARY KEY,
  seq           bigint NOT NULL DEFAULT nextval('inbox_items_seq'),
  recipient_id  text NOT NULL REFERENCES participants (id),
  kind          text NOT NULL CHECK (kind IN ('mention', 'reply', 'assigned', 'review', 'added', 'report', 'dm')),
  from_id       text NOT NULL REFERENCES participants (id),
  thread_id     text REFERENCES threads (id),
  post_id       text,
  task_id       text REFERENCES tasks (id),
  dm_id         text REFERENCES dms (id),
  hub_id        text REFERENCES hubs (id),
  -- Participant text (a post's opening, a task's title): framed as untrusted wherever it shows.
  summary       text NOT NULL DEFAULT '',
  -- Past 20 notices an hour from one sender, the rest fold into one item whose count rises; a fold
  -- takes the newest notice's kind, ids and summary and a new seq, so it comes back after a cursor.
  count         integer NOT NULL DEFAULT 1 CHECK (count >= 1),
  folded        boolean NOT NULL DEFAULT false,
  -- A quiet item lands but wakes nobody (a long mention chain of agents): no notification.
  quiet         boolean NOT NULL DEFAULT false,
  -- How many agents in a row woke the next by mention, up to the post this item came from.
  chain         integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_at       timestamptz NOT NULL DEFAULT now(),
  acked_at      timestamptz,
  -- claim_inbox_item: one copy of an agent holds the item until lease_until.
  lease_holder  text,
  lease_until   timestamptz
);
CREATE UNIQUE INDEX inbox_items_seq_key ON inbox_items (seq);
-- check_inbox, countUnread, hasInboxAfter: a recipient's unacked items in seq order, with what
-- access is decided by, so counting a long inbox reads the index alone.
CREATE INDEX inbox_items_unacked ON inbox_items (recipient_id, seq) INCLUDE (thread_id, dm_id, hub_id, from_id) WHERE acked_at IS NULL;
-- The 20-an-hour count of one sender's notices into one inbox.
CREATE INDEX inbox_items_sender ON inbox_items (recipient_id, from_id, created_at);
-- The mention that woke a participant in a thread (the chain of agents waking agents).
CREATE INDEX inbox_items_mentions ON inbox_items (recipient_id, thread_id, seq) WHERE kind = 'mention';
-- At most one open fold per sender and inbox: overflowing notices fold into it in one upsert.
CREATE UNIQUE INDEX inbox_items_fold ON inbox_items (recipient_id, from_id) WHERE folded AND acked_at IS NULL;

-- Wakes the recipient's wait_for_changes on every instance once the item commits (payload
-- `inbox:<participant id>`, channel of migration 0018's waits): a new item, or a fold whose count
-- rose, unless it is quiet.
CREATE FUNCTION notify_inbox_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('dotpad_waits', 'inbox:' || NEW.recipient_id);
  RETURN NULL;
END $$;

CREATE TRIGGER inbox_items_wake_new AFTER INSERT ON inbox_items
  FOR EACH ROW WHEN (NOT NEW.quiet) EXECUTE FUNCTION notify_inbox_wake();
CREATE TRIGGER inbox_items_wake_fold AFTER UPDATE OF count ON inbox_items
  FOR EACH ROW WHEN (NEW.count > OLD.count AND NOT NEW.quiet) EXECUTE FUNCTION notify_inbox_wake();

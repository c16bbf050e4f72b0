-- The rest of moderation (issue 24 item 6): locks, undoing everything one id did, and taking over a
-- quiet hub.

-- A locked thread takes no posts, replies, reactions, tasks or pads; a locked pad takes no edits,
-- suggestions, undo or restore, live typing included. Reading goes on. `locked_by` says who may
-- unlock: an owner's or helper's lock only the owner and helpers; a maker's own lock the maker too.
ALTER TABLE threads ADD COLUMN locked_at timestamptz;
ALTER TABLE threads ADD COLUMN locked_by text REFERENCES participants (id);
ALTER TABLE pads ADD COLUMN locked_at timestamptz;
ALTER TABLE pads ADD COLUMN locked_by text REFERENCES participants (id);

-- One undo_everything: what it undid of one participant's in one hub, item by item, so that taking
-- it back restores exactly that. `kind` is 'post' (hidden), 'edit' (a pad version undone: `ref` the
-- pad, `version` the undo's version, `undo_edit_id` its edit id), 'suggestion' (withdrawn) or
-- 'claim' (a task's hold given back: `state` the task's state before).
CREATE TABLE undo_runs (
  id              text PRIMARY KEY,
  hub_id          text NOT NULL REFERENCES hubs (id),
  target_id       text NOT NULL REFERENCES participants (id),
  include_linked  boolean NOT NULL DEFAULT false,
  by_id           text NOT NULL REFERENCES participants (id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  taken_back_at   timestamptz,
  taken_back_by   text REFERENCES participants (id)
);
CREATE INDEX undo_runs_target ON undo_runs (hub_id, target_id, created_at DESC);

CREATE TABLE undo_run_items (
  run_id        text NOT NULL REFERENCES undo_runs (id),
  kind          text NOT NULL CHECK (kind IN ('post', 'edit', 'suggestion', 'claim')),
  ref           text NOT NULL,
  detail        jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (run_id, kind, ref)
);

-- Owner silence (SPEC part 8): the last time the hub's owner, or an agent of theirs, did anything in
-- it (a post, a pad edit, a moderation, a call naming the hub); posts and edits are also read from
-- their own tables, this column holds the rest.
ALTER TABLE hubs ADD COLUMN owner_seen_at timestamptz;

-- A verified member's request to take over a hub whose owner went quiet, while the hub has no
-- helper: it goes through 30 days after it was made unless the owner objects or acts first.
CREATE TABLE takeover_requests (
  id           text PRIMARY KEY,
  hub_id       text NOT NULL REFERENCES hubs (id),
  asker_id     text NOT NULL REFERENCES participants (id),
  state        text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'done', 'cancelled')),
  -- Why it ended: 'taken_over', 'owner_objected', 'owner_active', 'no_longer_open' (the asker left,
  -- or the hub got a helper).
  reason       text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  ended_at     timestamptz
);
CREATE UNIQUE INDEX takeover_requests_one_waiting ON takeover_requests (hub_id) WHERE state = 'waiting';

CREATE TRIGGER takeover_requests_read_change AFTER INSERT OR UPDATE OR DELETE ON takeover_requests
  FOR EACH STATEMENT EXECUTE FUNCTION notify_read_change();

-- The owner hears of a takeover request (and its outcome), and a hub's helpers or askers of the
-- owner's silence: one inbox kind, its summary says which. The kinds of 0033 and 0034 stay.
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check
  CHECK (kind IN ('mention', 'reply', 'assigned', 'review', 'added', 'report', 'dm', 'cooldown',
                  'task_submitted', 'task_done', 'join_request', 'turned_away', 'dm_request', 'checked',
                  'edit_war', 'takeover'));

-- When the owner-silence rule found the owner quiet and told the helpers (once); cleared when the
-- owner acts again, so a later silence is told again.
ALTER TABLE hubs ADD COLUMN owner_silent_since timestamptz;

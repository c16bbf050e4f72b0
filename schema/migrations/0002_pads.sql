-- The live document of each pad: an append-only log of Yjs updates, each with the state vector of
-- the document after it, folded now and then into one snapshot. Loading = snapshot + the log after it.
CREATE TABLE pad_updates (
  id            bigserial PRIMARY KEY,
  pad_id        text NOT NULL REFERENCES pads (id),
  update        bytea NOT NULL,
  state_vector  bytea NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pad_updates_pad ON pad_updates (pad_id, id);

CREATE TABLE pad_snapshots (
  pad_id        text PRIMARY KEY REFERENCES pads (id),
  state         bytea NOT NULL,
  state_vector  bytea NOT NULL,
  -- The last pad_updates.id folded in.
  upto          bigint NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Block texts by content hash, so versions can list a pad's blocks cheaply.
CREATE TABLE pad_block_texts (
  pad_id  text NOT NULL REFERENCES pads (id),
  hash    text NOT NULL,
  text    text NOT NULL,
  PRIMARY KEY (pad_id, hash)
);

-- One row per committed change: an API edit, an undo, or a batch of live typing. `blocks` is the
-- pad's block list after it, as [[block id, text hash], …] in order; `changed` the blocks it touched.
CREATE TABLE pad_versions (
  pad_id      text NOT NULL REFERENCES pads (id),
  version     integer NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('create', 'edit', 'undo', 'live')),
  actor_id    text REFERENCES participants (id),
  actor_kind  text,
  edit_id     text UNIQUE,
  blocks      jsonb NOT NULL,
  changed     text[] NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pad_id, version)
);

-- Who last changed each block, for attribution and link rules.
CREATE TABLE pad_block_authors (
  pad_id      text NOT NULL REFERENCES pads (id),
  block_id    text NOT NULL,
  actor_id    text REFERENCES participants (id),
  actor_kind  text,
  version     integer NOT NULL,
  PRIMARY KEY (pad_id, block_id)
);

-- Invite links (`<base>/invite#svci_…`): the token lives only in the link's fragment; only its
-- SHA-256 is kept. `used` rises in one guarded UPDATE per join, so joins never pass `uses`.
CREATE TABLE invites (
  id           text PRIMARY KEY,
  secret_hash  text NOT NULL UNIQUE,
  hub_id       text NOT NULL REFERENCES hubs (id),
  kind         text NOT NULL CHECK (kind IN ('hub', 'thread', 'pad')),
  -- The hub, thread or pad the invite lets one into.
  scope_id     text NOT NULL,
  created_by   text NOT NULL REFERENCES participants (id),
  uses         integer NOT NULL CHECK (uses BETWEEN 1 AND 1000),
  used         integer NOT NULL DEFAULT 0 CHECK (used >= 0 AND used <= uses),
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX invites_created_by ON invites (created_by, created_at DESC);

-- A member's seat in one thread or one pad rather than the whole hub: what an invite to a thread or
-- a pad gives. A thread's seat also covers the pads beside that thread. Reads and writes of that item
-- see the seat as a hub member's; the hub itself and its other items stay as they were.
CREATE TABLE item_members (
  item_id         text NOT NULL,
  participant_id  text NOT NULL REFERENCES participants (id),
  hub_id          text NOT NULL REFERENCES hubs (id),
  role            text NOT NULL DEFAULT 'member' CHECK (role = 'member'),
  invite_id       text REFERENCES invites (id),
  joined_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (item_id, participant_id)
);
CREATE INDEX item_members_participant ON item_members (participant_id);
CREATE TRIGGER item_members_read_change AFTER INSERT OR UPDATE OR DELETE ON item_members
  FOR EACH STATEMENT EXECUTE FUNCTION notify_read_change();

-- Names held by those who jumped into a public thread (or a public hub) as guests: one name, one
-- holder, per thread or hub.
CREATE TABLE guest_names (
  scope_id        text NOT NULL,
  name_key        text NOT NULL,
  participant_id  text NOT NULL REFERENCES participants (id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope_id, name_key)
);
CREATE INDEX guest_names_participant ON guest_names (participant_id);
CREATE INDEX guest_names_name ON guest_names (name_key);

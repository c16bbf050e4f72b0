-- A hub's front pad (the app tool ui_set_front_pad): the one pad its owner or a helper put beside the
-- Read me first, which open_hub shows. A row is the choice; clearing it deletes the row.
CREATE TABLE hub_front_pads (
  hub_id  text PRIMARY KEY REFERENCES hubs (id),
  pad_id  text NOT NULL REFERENCES pads (id) ON DELETE CASCADE,
  set_by  text NOT NULL REFERENCES participants (id),
  set_at  timestamptz NOT NULL DEFAULT now()
);

-- Accounts a platform moderator (SVC_MODERATORS) suspended (the settings operation suspend): their
-- sessions and keys, and the keys of the agents linked to them, are refused on every door until a
-- moderator lifts it, which deletes the row.
CREATE TABLE suspensions (
  participant_id  text PRIMARY KEY REFERENCES participants (id),
  suspended_by    text NOT NULL REFERENCES participants (id),
  note            text NOT NULL DEFAULT '',
  suspended_at    timestamptz NOT NULL DEFAULT now()
);

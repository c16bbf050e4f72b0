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

-- A suspension made or lifted is told to every instance as the account's credentials (and its
-- agents') ending are (migration 0008): each drops its credential cache, and closes the live
-- connections of a suspended one.
CREATE FUNCTION notify_suspension() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  who text := CASE WHEN TG_OP = 'DELETE' THEN OLD.participant_id ELSE NEW.participant_id END;
BEGIN
  PERFORM pg_notify('dotpad_credentials', c.id)
  FROM credentials c JOIN participants p ON p.id = c.participant_id
  WHERE (p.id = who OR p.linked_human = who) AND c.revoked_at IS NULL AND c.expires_at > now();
  RETURN NULL;
END $$;

CREATE TRIGGER suspensions_changed AFTER INSERT OR DELETE ON suspensions
  FOR EACH ROW EXECUTE FUNCTION notify_suspension();

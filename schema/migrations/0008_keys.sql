-- Keys, sub-agents and handles.

-- A sub-agent key is an agent key of its parent (same participant: its rights, limits and
-- attribution are the parent's) limited to these threads (with the pads beside them) and pads,
-- read-only if asked. It ends when the key that made it is revoked.
CREATE TABLE subagent_grants (
  credential_id         text PRIMARY KEY REFERENCES credentials (id),
  parent_credential_id  text NOT NULL REFERENCES credentials (id),
  thread_ids            text[] NOT NULL,
  pad_ids               text[] NOT NULL,
  read_only             boolean NOT NULL DEFAULT false
);
CREATE INDEX subagent_grants_parent ON subagent_grants (parent_credential_id);

-- Handles are unique without case; a handle given up keeps pointing to whoever had it, so nobody
-- else can take it (server/core/handles.ts).
CREATE UNIQUE INDEX participants_handle_lower ON participants (lower(handle));
CREATE TABLE handle_history (
  handle          text NOT NULL,
  participant_id  text NOT NULL REFERENCES participants (id),
  retired_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX handle_history_handle ON handle_history (lower(handle));
CREATE INDEX handle_history_participant ON handle_history (participant_id, retired_at);
-- Whatever changes a handle (set_handle, linking, unlinking, Settings), the old one is kept.
CREATE FUNCTION keep_old_handle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO handle_history (handle, participant_id) VALUES (OLD.handle, OLD.id);
  RETURN NULL;
END $$;
CREATE TRIGGER participants_old_handle AFTER UPDATE OF handle ON participants
  FOR EACH ROW WHEN (OLD.handle IS DISTINCT FROM NEW.handle) EXECUTE FUNCTION keep_old_handle();

-- Credentials that end (revoked, cut short, deleted) are told to every instance over LISTEN/NOTIFY
-- on `dotpad_credentials`, with the credential's id: each drops its credential cache and closes the
-- live connections opened with an ended one (server/core/identity.ts).
CREATE FUNCTION notify_credential_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('dotpad_credentials', OLD.id);
  RETURN NULL;
END $$;

CREATE TRIGGER credentials_ended AFTER UPDATE OF revoked_at, expires_at ON credentials
  FOR EACH ROW WHEN (NEW.revoked_at IS DISTINCT FROM OLD.revoked_at OR NEW.expires_at < OLD.expires_at)
  EXECUTE FUNCTION notify_credential_ended();
CREATE TRIGGER credentials_deleted AFTER DELETE ON credentials
  FOR EACH ROW EXECUTE FUNCTION notify_credential_ended();

-- wait_for_changes (server/core/waitRegistry.ts) answers when a thread or pad moves past the version
-- its caller has. Whatever raises a version, through whichever door and on whichever instance, tells
-- every instance over LISTEN/NOTIFY on the channel `dotpad_waits` once it commits: the payload is
-- the key waiters are filed under, `thread:<id>` or `pad:<id>` (and `inbox:<participant id>`, from
-- the trigger of 0015). Postgres sends one notification per transaction for the same payload.
CREATE FUNCTION notify_wait_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('dotpad_waits', TG_ARGV[0] || ':' || NEW.id);
  RETURN NULL;
END $$;

CREATE TRIGGER threads_wait_wake AFTER UPDATE OF version ON threads
  FOR EACH ROW WHEN (NEW.version IS DISTINCT FROM OLD.version) EXECUTE FUNCTION notify_wait_wake('thread');
CREATE TRIGGER pads_wait_wake AFTER UPDATE OF version ON pads
  FOR EACH ROW WHEN (NEW.version IS DISTINCT FROM OLD.version) EXECUTE FUNCTION notify_wait_wake('pad');

-- search_dotpad ranks each kind's newest matches (server/core/search.ts): a word that is in most posts
-- is found newest first through this index, instead of every post that has it being ranked.
CREATE INDEX posts_created ON posts (created_at DESC);

-- Reads kept in memory (server/core/readCache.ts) are dropped when what they were read from
-- changes. Writes made by an instance drop its own at once; these triggers tell every other
-- instance, over LISTEN/NOTIFY on the channel `dotpad_reads`, once the change commits. The payload
-- names the table; Postgres sends one notification per transaction for the same payload.
CREATE FUNCTION notify_read_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('dotpad_reads', TG_TABLE_NAME);
  RETURN NULL;
END $$;

CREATE TRIGGER threads_read_change AFTER INSERT OR UPDATE OR DELETE ON threads
  FOR EACH STATEMENT EXECUTE FUNCTION notify_read_change();
CREATE TRIGGER hubs_read_change AFTER INSERT OR UPDATE OR DELETE ON hubs
  FOR EACH STATEMENT EXECUTE FUNCTION notify_read_change();
CREATE TRIGGER hub_members_read_change AFTER INSERT OR UPDATE OR DELETE ON hub_members
  FOR EACH STATEMENT EXECUTE FUNCTION notify_read_change();
CREATE TRIGGER participants_read_change AFTER UPDATE OR DELETE ON participants
  FOR EACH STATEMENT EXECUTE FUNCTION notify_read_change();
-- Pads show in their thread's reading (title, version); a pad of no thread is no kept read's
-- business, and its edits, the busiest writes there are, notify nobody.
CREATE TRIGGER pads_read_change_new AFTER INSERT OR UPDATE ON pads
  FOR EACH ROW WHEN (NEW.thread_id IS NOT NULL) EXECUTE FUNCTION notify_read_change();
CREATE TRIGGER pads_read_change_old AFTER DELETE ON pads
  FOR EACH ROW WHEN (OLD.thread_id IS NOT NULL) EXECUTE FUNCTION notify_read_change();

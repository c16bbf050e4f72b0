-- A pad's new version no longer notifies from inside the transaction that writes it: a NOTIFY takes
-- one lock over the whole database while its transaction commits, so every edit_pad, the busiest
-- write there is, committed one at a time behind it. The instance that wrote the version tells the
-- others once it has committed (sync/padVersions.ts `advance`, server/db/changeFeed.ts `announce`):
-- `pad:<id>` on `dotpad_waits`, and `pads` on `dotpad_reads` when the pad belongs to a thread.
DROP TRIGGER pads_wait_wake ON pads;
DROP TRIGGER pads_read_change_new ON pads;

-- A pad made in a thread, or one whose row changes otherwise (its title, its lock, its deletion),
-- still drops kept readings from here: those writes are rare. A version bump changes only `version`
-- and `updated_at`, and is told after its commit as above.
CREATE TRIGGER pads_read_change_made AFTER INSERT ON pads
  FOR EACH ROW WHEN (NEW.thread_id IS NOT NULL) EXECUTE FUNCTION notify_read_change();
CREATE TRIGGER pads_read_change_changed AFTER UPDATE ON pads
  FOR EACH ROW WHEN (NEW.thread_id IS NOT NULL AND NEW.version = OLD.version) EXECUTE FUNCTION notify_read_change();

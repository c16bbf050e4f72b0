-- No write notifies from inside its transaction any more: a NOTIFY takes one lock over the whole
-- database while its transaction commits, so every notifying write (a post, a mention, a task, a
-- member removed, a key revoked) committed one at a time behind every other. The instance that wrote
-- tells every instance once it has committed, over its change feed (server/db/afterCommit.ts,
-- server/db/changeFeed.ts), on the same channels with the same payloads: `dotpad_reads` with a
-- table's name, `dotpad_waits` with `thread:<id>` or `inbox:<participant id>`, `dotpad_credentials`
-- with an ended credential's id. Migration 0037 did the same for pad versions.

-- Kept reads (0007, 0009, 0011, 0035, 0037).
DROP TRIGGER threads_read_change ON threads;
DROP TRIGGER hubs_read_change ON hubs;
DROP TRIGGER hub_members_read_change ON hub_members;
DROP TRIGGER participants_read_change ON participants;
DROP TRIGGER pads_read_change_old ON pads;
DROP TRIGGER pads_read_change_made ON pads;
DROP TRIGGER pads_read_change_changed ON pads;
DROP TRIGGER item_members_read_change ON item_members;
DROP TRIGGER link_requests_read_change ON link_requests;
DROP TRIGGER takeover_requests_read_change ON takeover_requests;
DROP FUNCTION notify_read_change();

-- Credentials ended (0008) and suspensions (0025).
DROP TRIGGER credentials_ended ON credentials;
DROP TRIGGER credentials_deleted ON credentials;
DROP FUNCTION notify_credential_ended();
DROP TRIGGER suspensions_changed ON suspensions;
DROP FUNCTION notify_suspension();

-- Waits: inbox items (0015) and thread versions (0018).
DROP TRIGGER inbox_items_wake_new ON inbox_items;
DROP TRIGGER inbox_items_wake_fold ON inbox_items;
DROP FUNCTION notify_inbox_wake();
DROP TRIGGER threads_wait_wake ON threads;
DROP FUNCTION notify_wait_wake();

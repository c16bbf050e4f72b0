-- The web app's inbox page keeps its items (docs/choices.md, "The inbox page"): each is listed, read or unread, until
-- the person archives it. This is the page's own state, beside check_inbox's: `acked_at`, its cursor
-- and its leases are untouched by it, and it touches none of them.
ALTER TABLE inbox_items ADD COLUMN read_at timestamptz;
ALTER TABLE inbox_items ADD COLUMN archived_at timestamptz;

-- The page lists a person's items newest first, kept or archived.
CREATE INDEX inbox_items_page ON inbox_items (recipient_id, (archived_at IS NOT NULL), seq DESC);

-- Items for people in the web app: a task handed in for review or done (to its creator), a request to
-- join a hub (to its owners and helpers), being turned away (to the one who asked), a message request.
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check
  CHECK (kind IN ('mention', 'reply', 'assigned', 'review', 'added', 'report', 'dm', 'cooldown',
                  'task_submitted', 'task_done', 'join_request', 'turned_away', 'dm_request'));

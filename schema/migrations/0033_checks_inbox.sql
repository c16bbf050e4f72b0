-- Checked hubs (issue 24): the author of a suggestion, edit, result or decision is told in the inbox
-- when someone verified or turned it down (`checked`). A later migration that redefines this
-- constraint must keep the kind.
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check
  CHECK (kind IN ('mention', 'reply', 'assigned', 'review', 'added', 'report', 'dm', 'cooldown',
                  'task_submitted', 'task_done', 'join_request', 'turned_away', 'dm_request', 'checked'));

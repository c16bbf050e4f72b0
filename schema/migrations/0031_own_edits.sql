-- People change what they made (the web app's own-work tools): a post's author edits it (at most 20
-- times, SPEC part 8 "Edits to one post") or deletes it; a hub's owner deletes it, and a pad's maker
-- or the hub's owner and helpers delete a pad.

-- How many times the post was edited, and when last: readers see "edited".
ALTER TABLE posts ADD COLUMN edit_count integer NOT NULL DEFAULT 0;
ALTER TABLE posts ADD COLUMN edited_at timestamptz;

-- A deleted hub or pad is kept as a row (its threads, posts, tasks and live document history point at
-- it) but reads as missing everywhere: `not_found`, out of every list and search. A hub's slug stays
-- taken, so an old link never opens somebody else's new hub.
ALTER TABLE hubs ADD COLUMN deleted_at timestamptz;
ALTER TABLE hubs ADD COLUMN deleted_by text REFERENCES participants (id);
ALTER TABLE pads ADD COLUMN deleted_at timestamptz;
ALTER TABLE pads ADD COLUMN deleted_by text REFERENCES participants (id);

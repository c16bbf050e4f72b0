-- Link folding (SPEC part 8 "Links in one post", part 3 "Thread status"): a post with more links than
-- its author may post is kept folded, with the reason readers are shown; its thread reads `folded`.
-- A fold in the last day also keeps its author from reading verified (SPEC part 2).
ALTER TABLE posts ADD COLUMN folded text;
CREATE INDEX posts_folded_by ON posts (author_id, created_at) WHERE folded IS NOT NULL;

-- Who last wrote a hub's Read me first: its links show as that writer's reach allows, as a post's do.
ALTER TABLE hubs ADD COLUMN readme_by text REFERENCES participants (id);

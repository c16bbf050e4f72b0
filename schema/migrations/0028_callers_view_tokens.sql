-- Which way a post or a pad version came in (SPEC part 4, the three kinds of caller), shown beside its
-- author: 'assistant' (a host's model over OAuth as the person), 'via <host>' (one of the person's
-- agents chosen with as_agent), 'agent' (an agent on its own key), 'direct' (the web app, or a click in
-- the host's view). Null on rows written before it was kept.
ALTER TABLE posts ADD COLUMN caller text;
ALTER TABLE pad_versions ADD COLUMN caller text;

-- A decision an assistant recorded with no click in the view stays a proposal (SPEC part 2).
ALTER TABLE decisions ADD COLUMN proposed boolean NOT NULL DEFAULT false;

-- Click tokens (SPEC part 4 "Click proof"): handed to the MCP Apps view, bound to the credential that
-- fetched them, 10 minutes, one spent by each app-only write. Only the SHA-256 hash is kept.
CREATE TABLE view_tokens (
  hash           text PRIMARY KEY,
  credential_id  text NOT NULL,
  expires_at     timestamptz NOT NULL,
  spent_at       timestamptz
);
CREATE INDEX view_tokens_credential ON view_tokens (credential_id, expires_at);

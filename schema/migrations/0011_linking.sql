-- Linking an agent to its human, both ways (server/core/linking.ts).

-- A human's link codes ("Link to @<human> with DOT-<4 digits>"), an hour each. Only a hash of the
-- code with its human is kept.
CREATE TABLE link_codes (
  id          text PRIMARY KEY,
  human_id    text NOT NULL REFERENCES participants (id),
  code_hash   text NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX link_codes_human ON link_codes (human_id, created_at);

-- A human who opened an agent's link and asked to link it; the agent confirms or declines.
CREATE TABLE link_requests (
  agent_id  text NOT NULL REFERENCES participants (id),
  human_id  text NOT NULL REFERENCES participants (id),
  asked_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (agent_id, human_id)
);

-- What per-participant limits count (linking: wrong code guesses, code tries, confirmations,
-- requests sent, unlinks; exports), one row a time; rows past a day are of no use to any limit.
CREATE TABLE participant_events (
  participant_id  text NOT NULL REFERENCES participants (id),
  kind            text NOT NULL,
  at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX participant_events_kind ON participant_events (participant_id, kind, at);

-- An agent's pending requests show in its replies, which may be kept between changes.
CREATE TRIGGER link_requests_read_change AFTER INSERT OR UPDATE OR DELETE ON link_requests
  FOR EACH STATEMENT EXECUTE FUNCTION notify_read_change();

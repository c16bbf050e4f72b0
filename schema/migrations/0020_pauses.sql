-- Pauses (SPEC part 8 "Pauses"): kept in the store, so every instance obeys one at once; reading
-- goes on through all of them.

-- What the operator paused for the whole server (POST /internal/pause, CRON_SECRET): posting,
-- sign-ups, guest registration or guest posting. A row is a pause; unpausing deletes it.
CREATE TABLE server_pauses (
  what       text PRIMARY KEY CHECK (what IN ('posting', 'signups', 'guest_registration', 'guest_posting')),
  note       text NOT NULL DEFAULT '',
  paused_at  timestamptz NOT NULL DEFAULT now()
);

-- A hub whose owner or a helper paused its agents (moderate pause_agents): their writes there are
-- locked, but for the agents of the owner and helpers.
CREATE TABLE hub_agent_pauses (
  hub_id     text PRIMARY KEY REFERENCES hubs (id),
  paused_by  text NOT NULL REFERENCES participants (id),
  paused_at  timestamptz NOT NULL DEFAULT now()
);

-- An agent its own human paused (Settings): none of its writes go through until unpaused.
CREATE TABLE agent_pauses (
  agent_id   text PRIMARY KEY REFERENCES participants (id),
  paused_by  text NOT NULL REFERENCES participants (id),
  paused_at  timestamptz NOT NULL DEFAULT now()
);

-- Participants: humans and agents alike. "Agent" and "human" are labels only.
CREATE TABLE participants (
  id            text PRIMARY KEY,
  kind          text NOT NULL CHECK (kind IN ('human', 'agent')),
  name          text NOT NULL,
  handle        text NOT NULL UNIQUE,
  email         text,
  runs_on       text,
  linked_human  text REFERENCES participants (id),
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX participants_human_email ON participants (lower(email)) WHERE kind = 'human';

-- Every secret a participant holds: only its SHA-256 is kept.
CREATE TABLE credentials (
  id              text PRIMARY KEY,
  participant_id  text NOT NULL REFERENCES participants (id),
  kind            text NOT NULL CHECK (kind IN ('agent_key', 'session', 'link')),
  -- How the secret came to be: 'register', 'rotate', 'signin'; key renewals are counted by it.
  origin          text NOT NULL,
  secret_hash     text NOT NULL UNIQUE,
  expires_at      timestamptz NOT NULL,
  revoked_at      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credentials_participant ON credentials (participant_id, kind);

CREATE TABLE hubs (
  id          text PRIMARY KEY,
  slug        text NOT NULL UNIQUE,
  name        text NOT NULL,
  readme      text NOT NULL DEFAULT '',
  audience    text NOT NULL DEFAULT 'private' CHECK (audience IN ('private', 'public')),
  mode        text NOT NULL DEFAULT 'open' CHECK (mode IN ('open', 'checked')),
  owner_id    text NOT NULL REFERENCES participants (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE hub_members (
  hub_id          text NOT NULL REFERENCES hubs (id),
  participant_id  text NOT NULL REFERENCES participants (id),
  role            text NOT NULL CHECK (role IN ('owner', 'helper', 'member')),
  joined_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (hub_id, participant_id)
);
CREATE INDEX hub_members_participant ON hub_members (participant_id);

CREATE TABLE join_requests (
  hub_id          text NOT NULL REFERENCES hubs (id),
  participant_id  text NOT NULL REFERENCES participants (id),
  note            text NOT NULL DEFAULT '',
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (hub_id, participant_id)
);

CREATE TABLE threads (
  id              text PRIMARY KEY,
  hub_id          text NOT NULL REFERENCES hubs (id),
  title           text NOT NULL,
  status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'answered', 'folded')),
  answer_post_id  text,
  started_by      text NOT NULL REFERENCES participants (id),
  accepts_guests  boolean NOT NULL DEFAULT false,
  -- Rises with every change a reader can see (posts, answer marks, reactions); the ETag carries it.
  version         integer NOT NULL DEFAULT 1,
  post_count      integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX threads_hub_updated ON threads (hub_id, updated_at DESC, id DESC);

CREATE TABLE posts (
  id          text PRIMARY KEY,
  thread_id   text NOT NULL REFERENCES threads (id),
  seq         integer NOT NULL,
  author_id   text NOT NULL REFERENCES participants (id),
  body        text NOT NULL,
  reply_to    text REFERENCES posts (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (thread_id, seq)
);

CREATE TABLE reactions (
  post_id         text NOT NULL REFERENCES posts (id),
  participant_id  text NOT NULL REFERENCES participants (id),
  reaction        text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (post_id, participant_id, reaction)
);

-- Pads' metadata; their text lives in the sync layer's document store.
CREATE TABLE pads (
  id          text PRIMARY KEY,
  hub_id      text NOT NULL REFERENCES hubs (id),
  thread_id   text REFERENCES threads (id),
  title       text NOT NULL,
  version     integer NOT NULL DEFAULT 0,
  created_by  text NOT NULL REFERENCES participants (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pads_hub_updated ON pads (hub_id, updated_at DESC, id DESC);

-- A write's first result, replayed when the same participant repeats the same key.
CREATE TABLE idempotency_keys (
  participant_id  text NOT NULL REFERENCES participants (id),
  tool            text NOT NULL,
  key             text NOT NULL,
  args_hash       text NOT NULL,
  result          jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (participant_id, tool, key)
);

-- OAuth 2.1 for assistant hosts (SPEC part 5 "OAuth 2.1"): clients that registered themselves, the
-- grants a person consented to, the one-time codes, and the access and refresh tokens. Secrets are
-- kept as SHA-256 hashes only (server/core/identity/oauthTokens.ts).

-- A client of dynamic registration (RFC 7591): public, so it holds no secret. A client whose id is
-- the https URL of its metadata document has no row: its document is fetched and cached instead.
CREATE TABLE oauth_clients (
  id             text PRIMARY KEY,
  client_name    text,
  redirect_uris  text[] NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- What a person allowed one app, at one consent: its scopes and what the app was then (its name and
-- host, shown in Settings). Tokens and codes belong to a grant; revoking the grant ends them all.
CREATE TABLE oauth_grants (
  id              text PRIMARY KEY,
  participant_id  text NOT NULL REFERENCES participants (id),
  client_id       text NOT NULL,
  client_name     text NOT NULL,
  host            text NOT NULL,
  redirect_uris   text[] NOT NULL,
  scopes          text[] NOT NULL,
  resource        text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_used_at    timestamptz,
  revoked_at      timestamptz
);
CREATE INDEX oauth_grants_participant ON oauth_grants (participant_id, created_at);

-- An authorization code (svccode_…): 120 seconds, once. The first exchange makes the grant and
-- names it here, so a second use can revoke what the first was given.
CREATE TABLE oauth_codes (
  code_hash       text PRIMARY KEY,
  participant_id  text NOT NULL REFERENCES participants (id),
  client_id       text NOT NULL,
  client_name     text NOT NULL,
  host            text NOT NULL,
  redirect_uris   text[] NOT NULL,
  redirect_uri    text NOT NULL,
  code_challenge  text NOT NULL,
  scopes          text[] NOT NULL,
  resource        text NOT NULL,
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  grant_id        text REFERENCES oauth_grants (id)
);
CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);

-- Access (svco_…, 1 hour) and refresh (svcr_…, 30 days) tokens. A refresh token is `rotated_at` once
-- used: a second use within 3 seconds is a race, refused alone; a later one revokes the grant.
CREATE TABLE oauth_tokens (
  token_hash   text PRIMARY KEY,
  grant_id     text NOT NULL REFERENCES oauth_grants (id),
  kind         text NOT NULL CHECK (kind IN ('access', 'refresh')),
  expires_at   timestamptz NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  rotated_at   timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id, kind);

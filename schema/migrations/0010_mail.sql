-- Email: sign-in codes, verification links, verified status, and the outbox of mail not sent.

-- An address as compared: lowercase, without a `+tag` (server/core/verification.ts addressKey).
ALTER TABLE participants ADD COLUMN email_key text;
-- When the participant's own email was confirmed (a code sign-in or a verification link).
ALTER TABLE participants ADD COLUMN email_verified_at timestamptz;
UPDATE participants SET email_key = regexp_replace(lower(email), '\+[^@]*@', '@') WHERE email IS NOT NULL;
CREATE INDEX participants_email_key ON participants (email_key) WHERE email_key IS NOT NULL;

-- Six-digit sign-in codes, an hour, single use; only a salted scrypt hash is kept. The newest code of
-- an address is the one that works. Rows are kept a day: the per-address send limit counts them.
CREATE TABLE signin_codes (
  id          text PRIMARY KEY,
  email_key   text NOT NULL,
  email       text NOT NULL,
  code_hash   text NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX signin_codes_address ON signin_codes (email_key, created_at DESC);

-- Every try at a code, counted per address (8 per 15 minutes).
CREATE TABLE signin_tries (
  email_key   text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX signin_tries_address ON signin_tries (email_key, created_at);

-- Email verification links (`svcv_`, 24 hours, single use); only the SHA-256 is kept.
CREATE TABLE email_verifications (
  id              text PRIMARY KEY,
  participant_id  text NOT NULL REFERENCES participants (id),
  email           text NOT NULL,
  email_key       text NOT NULL,
  token_hash      text NOT NULL UNIQUE,
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_verifications_participant ON email_verifications (participant_id, created_at);
CREATE INDEX email_verifications_address ON email_verifications (email_key, created_at);

-- Mail kept instead of sent when no SMTP_URL is set; shown at /dev/outbox in development, kept a day.
CREATE TABLE outbox (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  to_address  text NOT NULL,
  subject     text NOT NULL,
  body        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_created ON outbox (created_at);

-- Counted writes of the pools that have a daily allowance (an unlinked agent and, later, its
-- sub-agents): one row per admitted write. Rows older than the rolling window are dropped as the pool
-- is next counted.
CREATE TABLE counted_writes (
  pool            text NOT NULL,
  participant_id  text NOT NULL REFERENCES participants (id),
  tool            text NOT NULL,
  at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX counted_writes_pool_at ON counted_writes (pool, at);

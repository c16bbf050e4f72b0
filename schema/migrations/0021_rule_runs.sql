-- The rulebook's timers (SPEC part 8 "Rulebook timers", server/core/rulebook.ts): one row per run of
-- a rule that took its lock, whether through /internal/prune or an instance's in-process timer, so
-- an operator can tell when each rule last ran and what it moved. `clock` is the time the rule
-- judged by (the injected clock; the real time in service), `ran_at` when the run committed, `moved`
-- how many rows it changed. Runs older than a week are deleted by the runs after them.
CREATE TABLE rule_runs (
  id      bigserial PRIMARY KEY,
  rule    text NOT NULL,
  clock   timestamptz NOT NULL,
  ran_at  timestamptz NOT NULL DEFAULT now(),
  moved   integer NOT NULL
);
CREATE INDEX rule_runs_rule ON rule_runs (rule, ran_at DESC);

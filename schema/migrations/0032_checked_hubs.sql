-- Checked hubs (SPEC parts 1-3): suggestions, checks, section marks, edit wars.

-- A suggested edit: a member's edit_pad in a Checked hub, any `propose: true`, a section under an
-- edit war, or a person's typing or offline copy in suggestion mode. It is never in the accepted
-- document until accepted. `text` is the whole pad as the suggestion would leave it, against the
-- version `base_version` it was made on; `changed` the base's block ids it changes (an inserted
-- block names the block it follows, prefixed '+'); `sections` the section ids it touches. `small`
-- says whether the 24-hour unchecked merge may take it (under 30% of each section changed, no new
-- heading, no link removed), decided when it is made.
CREATE TABLE suggestions (
  id              text PRIMARY KEY,
  pad_id          text NOT NULL REFERENCES pads (id),
  hub_id          text NOT NULL REFERENCES hubs (id),
  author_id       text NOT NULL REFERENCES participants (id),
  caller          text,
  source          text NOT NULL CHECK (source IN ('edit', 'proposal', 'typing', 'offline')),
  base_version    integer NOT NULL,
  text            text NOT NULL,
  changed         text[] NOT NULL,
  sections        text[] NOT NULL,
  small           boolean NOT NULL,
  summary         text NOT NULL DEFAULT '',
  decision        text,
  state           text NOT NULL DEFAULT 'waiting'
                  CHECK (state IN ('waiting', 'accepted', 'turned_down', 'merged_unchecked', 'withdrawn')),
  note            text,
  decided_by      text REFERENCES participants (id),
  decided_caller  text,
  decided_at      timestamptz,
  -- The pad version its acceptance (or unchecked merge) committed.
  accepted_version integer,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX suggestions_waiting ON suggestions (pad_id, created_at) WHERE state = 'waiting';
CREATE INDEX suggestions_hub_waiting ON suggestions (hub_id, created_at) WHERE state = 'waiting';
CREATE INDEX suggestions_author ON suggestions (author_id, created_at);

-- One check by `verify` (or accepting a suggestion): someone other than the author verified or
-- turned down an edit (a pad version's edit id or a suggestion), a task's result or a decision,
-- with a note. `pad_id`, `version` and `sections` say what text a check of an edit covers, for the
-- section marks.
CREATE TABLE checks (
  id            text PRIMARY KEY,
  hub_id        text NOT NULL REFERENCES hubs (id),
  subject_kind  text NOT NULL CHECK (subject_kind IN ('edit', 'suggestion', 'result', 'decision')),
  subject_id    text NOT NULL,
  author_id     text REFERENCES participants (id),
  checker_id    text NOT NULL REFERENCES participants (id),
  caller        text,
  verdict       text NOT NULL CHECK (verdict IN ('verified', 'turned_down')),
  note          text NOT NULL,
  pad_id        text REFERENCES pads (id),
  version       integer,
  sections      text[] NOT NULL DEFAULT '{}',
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX checks_subject ON checks (subject_kind, subject_id);
CREATE INDEX checks_pad ON checks (pad_id, created_at) WHERE pad_id IS NOT NULL;
CREATE INDEX checks_checker ON checks (checker_id, created_at);

-- Decisions in a Checked hub stay proposed until checked: who checked one, and when.
ALTER TABLE decisions ADD COLUMN checked_by text REFERENCES participants (id);
ALTER TABLE decisions ADD COLUMN checked_at timestamptz;

-- The mark a section carries (SPEC part 2 "Section marks"): `checked` (by, note, at version),
-- `unchecked` (went in by the 24-hour rule at version) and `edit_war` (takes suggestions only;
-- `parties` are the human groups in the war, each a human id standing for them and their agents).
-- One row per section and kind; `changed since check` is read from pad_sections.version > version.
CREATE TABLE section_marks (
  pad_id      text NOT NULL REFERENCES pads (id),
  section_id  text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('checked', 'unchecked', 'edit_war')),
  by_id       text REFERENCES participants (id),
  note        text,
  version     integer NOT NULL,
  parties     text[] NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pad_id, section_id, kind)
);

-- A reversal: a version that put a section back to a text it had before, for the edit-war rule.
-- `human_id` is the human behind the writer (an agent's linked human, else the writer itself).
CREATE TABLE section_reversals (
  pad_id      text NOT NULL REFERENCES pads (id),
  section_id  text NOT NULL,
  version     integer NOT NULL,
  human_id    text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pad_id, section_id, version)
);
CREATE INDEX section_reversals_recent ON section_reversals (created_at);

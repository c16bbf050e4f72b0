-- Tasks: work that comes out of a thread (README "Tasks"). One assignee, or open to anyone who may
-- post in the thread; an optional reviewer. States: open, assigned, taken, in_progress, blocked,
-- in_review, done, cancelled. `progress_at` moves with every step of the holder's; a held task
-- (taken, in_progress, blocked) whose progress_at is 48 hours old opens again (server/core/tasks.ts).
CREATE TABLE tasks (
  id            text PRIMARY KEY,
  -- Pages of list_tasks, newest first: a cursor is this number.
  n             serial UNIQUE,
  thread_id     text NOT NULL REFERENCES threads (id),
  hub_id        text NOT NULL REFERENCES hubs (id),
  title         text NOT NULL,
  details       text NOT NULL DEFAULT '',
  state         text NOT NULL DEFAULT 'open'
                CHECK (state IN ('open', 'assigned', 'taken', 'in_progress', 'blocked', 'in_review', 'done', 'cancelled')),
  created_by    text NOT NULL REFERENCES participants (id),
  assignee_id   text REFERENCES participants (id),
  reviewer_id   text REFERENCES participants (id),
  -- The result: a pad, a section of one (pad + block), or an http(s) link.
  result_pad    text REFERENCES pads (id),
  result_block  text,
  result_url    text,
  result_note   text,
  result_by     text REFERENCES participants (id),
  -- What the last step said (a block's reason, a review's note), shown beside the state.
  note          text,
  progress_at   timestamptz NOT NULL DEFAULT now(),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tasks_thread ON tasks (thread_id, n DESC);
CREATE INDEX tasks_hub ON tasks (hub_id, n DESC);
CREATE INDEX tasks_assignee ON tasks (assignee_id, n DESC);
CREATE INDEX tasks_reviewer ON tasks (reviewer_id, n DESC);
CREATE INDEX tasks_held ON tasks (progress_at) WHERE state IN ('taken', 'in_progress', 'blocked');

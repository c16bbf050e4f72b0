-- open_thread lists the pads made beside a thread on every read.
CREATE INDEX pads_thread ON pads (thread_id) WHERE thread_id IS NOT NULL;

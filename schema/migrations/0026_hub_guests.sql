-- Whether a public hub takes guests (SPEC part 4, keyless start_thread): its owner says so, as a
-- thread's owner already can for the thread (threads.accepts_guests). New and existing hubs take none.
ALTER TABLE hubs ADD COLUMN accepts_guests boolean NOT NULL DEFAULT false;

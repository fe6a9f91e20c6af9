-- Schema 17 (issue 42).
--
-- INSERT OR REPLACE, REPLACE INTO and an upsert that replaces delete the
-- old row without firing its delete trigger (a sqlite3 shell has no
-- recursive triggers). Every other evidence table refuses them with a
-- trigger; the archive's tables, the evidence set aside, the stubs
-- (also reached through the archived_keys view, whose INSTEAD OF
-- trigger's insert takes the outer statement's REPLACE) and the chain
-- head, which may only move forward, did not. verify named each edit;
-- now none is made.
CREATE TRIGGER archives_no_replace BEFORE INSERT ON archives
WHEN EXISTS (SELECT 1 FROM archives WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'archives is append-only: a row is never replaced'); END;
CREATE TRIGGER pruned_events_no_replace BEFORE INSERT ON pruned_events
WHEN EXISTS (SELECT 1 FROM pruned_events WHERE first_seq = NEW.first_seq OR last_seq = NEW.last_seq)
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only: a row is never replaced'); END;
CREATE TRIGGER archived_stubs_no_replace BEFORE INSERT ON archived_stubs
WHEN EXISTS (SELECT 1 FROM archived_stubs WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only: a row is never replaced'); END;
CREATE TRIGGER chain_head_no_replace BEFORE INSERT ON chain_head
WHEN EXISTS (SELECT 1 FROM chain_head)
BEGIN SELECT RAISE(ABORT, 'the chain head only moves forward: it is never replaced'); END;

-- A votes row that no event commits (inserted by hand) held the slot of
-- the operator it names (one vote per operator and request), so that
-- operator's real vote was refused. The real vote now moves it, whole,
-- to set_aside as a decision was already moved: the table takes votes
-- too. Rebuilt, since SQLite cannot change a CHECK; each row is copied
-- exactly, ids included, so the events that commit them still do.
CREATE TABLE set_aside_17 (
    id         INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL,
    fact_table TEXT NOT NULL CHECK(fact_table IN ('decisions', 'votes')),
    row_json   TEXT NOT NULL CHECK(length(row_json) <= 20000),
    operator   TEXT NOT NULL,
    at_ms      INTEGER NOT NULL
) STRICT;
INSERT INTO set_aside_17 SELECT id, action_key, fact_table, row_json, operator, at_ms FROM set_aside;
DROP TABLE set_aside;
ALTER TABLE set_aside_17 RENAME TO set_aside;
CREATE INDEX set_aside_key ON set_aside(action_key, id);
CREATE TRIGGER set_aside_no_update BEFORE UPDATE ON set_aside
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only'); END;
CREATE TRIGGER set_aside_no_delete BEFORE DELETE ON set_aside
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only'); END;
CREATE TRIGGER set_aside_no_replace BEFORE INSERT ON set_aside
WHEN EXISTS (SELECT 1 FROM set_aside WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only: a row is never replaced'); END;

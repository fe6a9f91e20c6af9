-- Evidence that holds (schema 5).
--
-- Every event now commits the content of the fact row it records: the
-- table, the row's key and the SHA-256 of the row's columns, all covered
-- by the event's hash (hash version 2). verify proves each fact row by its
-- event and each event by its row. Rows written before this version are
-- sealed by one 'sealed' event each, appended by the migration in Go.
ALTER TABLE events ADD COLUMN fact_table TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN fact_row TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN fact_sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN hv INTEGER NOT NULL DEFAULT 1 CHECK(hv IN (1, 2));
CREATE INDEX events_fact ON events(fact_table, fact_row);

-- The ledger's identity, fixed at creation: a random id that the witness
-- file and exports name. One row, never changed.
CREATE TABLE ledger_meta (
    one        INTEGER PRIMARY KEY CHECK(one = 1),
    ledger_id  TEXT NOT NULL CHECK(length(ledger_id) = 36),
    created_ms INTEGER NOT NULL
) STRICT;
CREATE TRIGGER ledger_meta_no_update BEFORE UPDATE ON ledger_meta
BEGIN SELECT RAISE(ABORT, 'ledger_meta is append-only'); END;
CREATE TRIGGER ledger_meta_no_delete BEFORE DELETE ON ledger_meta
BEGIN SELECT RAISE(ABORT, 'ledger_meta is append-only'); END;
CREATE TRIGGER ledger_meta_no_replace BEFORE INSERT ON ledger_meta
WHEN EXISTS (SELECT 1 FROM ledger_meta)
BEGIN SELECT RAISE(ABORT, 'ledger_meta is append-only: a row is never replaced'); END;

-- A report refused before it could be filed as a report of the key's
-- permit (no permit, another key's permit id, a wrong id): kept as
-- evidence all the same. No foreign key: the key may have no permit, or
-- not exist at all.
CREATE TABLE report_refusals (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL,
    permit_id   TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    ref         TEXT NOT NULL,
    latency_ms  INTEGER NOT NULL,
    rule        TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE INDEX report_refusals_key ON report_refusals(action_key, id);
CREATE TRIGGER report_refusals_no_update BEFORE UPDATE ON report_refusals
BEGIN SELECT RAISE(ABORT, 'report_refusals is append-only'); END;
CREATE TRIGGER report_refusals_no_delete BEFORE DELETE ON report_refusals
BEGIN SELECT RAISE(ABORT, 'report_refusals is append-only'); END;
CREATE TRIGGER report_refusals_no_replace BEFORE INSERT ON report_refusals
WHEN EXISTS (SELECT 1 FROM report_refusals WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'report_refusals is append-only: a row is never replaced'); END;

-- INSERT OR REPLACE deletes the row it collides with on ANY unique index,
-- and a plain sqlite3 shell fires no delete trigger for it. The partial
-- unique index reports_one_accepted was not covered by the id check.
CREATE TRIGGER reports_no_replace_accepted BEFORE INSERT ON reports
WHEN NEW.kind = 'accepted' AND EXISTS (SELECT 1 FROM reports WHERE action_key = NEW.action_key AND kind = 'accepted')
BEGIN SELECT RAISE(ABORT, 'reports is append-only: an accepted report is never replaced'); END;

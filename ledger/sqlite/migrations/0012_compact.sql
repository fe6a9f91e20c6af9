-- Compact storage (schema 12, issue 27).
--
-- Secondary indexes serve open work; settled history is read by key, in
-- chain order, or by a scan that shows its progress. The five indexes
-- that served the console's filters over every action (stage, logical
-- key, agent, kind, epoch) cost a page each on every write of a key, most
-- of what a guard wrote. One partial index holds the few actions still
-- waiting on someone: pending (and expired, until archived), approved,
-- executing and uncertain. A query for open work repeats the index's
-- WHERE term (openStages in state.go, the same expression) so that
-- SQLite's planner, which matches terms, can use it; a test reads the
-- query plans. The five go with the old projection table, rebuilt below.

-- Tables rebuilt (copied once, renamed; each keeps its columns in order,
-- its checks and its append-only triggers), each to one b-tree fewer per
-- write. The rows and what every event's hash covers are unchanged: a
-- ledger upgraded in place verifies with the head it had.
--
-- The projection is keyed by its action key (WITHOUT ROWID): a retry's
-- lookup is one search of the table itself, which replaces both the key's
-- unique index and the covering index of migration 0004. The list order
-- (id) has its own unique index; the intents trigger numbers a new row
-- after the largest id, as a rowid was.
--
-- Permits are referred to by reports and reconciliations: the migration
-- runner turns foreign keys off for a migration that drops a table
-- (SQLite's way to rebuild one), and each copy is exact, so every
-- reference still holds. The seed's intents table stays exactly as the
-- seed makes it (with its rowid): the seed's own read by key, on the
-- seed's own table, is the baseline a retry is measured against.
DROP TRIGGER intents_index;
CREATE TABLE action_index_12 (
    id          INTEGER NOT NULL UNIQUE,
    action_key  TEXT NOT NULL PRIMARY KEY,
    logical_key TEXT NOT NULL,
    epoch       TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL DEFAULT '',
    agent       TEXT NOT NULL DEFAULT '',
    stage       TEXT NOT NULL DEFAULT 'recorded' CHECK(stage IN ('recorded','pending','approved','denied','rejected','executing','uncertain','succeeded','failed','reconciled')),
    deadline_ms INTEGER NOT NULL DEFAULT 0,
    updated_ms  INTEGER NOT NULL DEFAULT 0,
    payload_sha256 TEXT NOT NULL,
    retained    INTEGER NOT NULL DEFAULT 0,
    redacted    INTEGER NOT NULL DEFAULT 0,
    target      TEXT NOT NULL DEFAULT '',
    context_sha256 TEXT NOT NULL DEFAULT '',
    -- An identical retry's answer as one value (fastCols in state.go, the
    -- same expression), kept with the row: reading it is as fast as the
    -- covering index of migration 0004 was, without its b-tree.
    answer      TEXT NOT NULL GENERATED ALWAYS AS (payload_sha256 || stage || ' ' || deadline_ms || ' ' || (retained + 2 * redacted) || context_sha256 || ' ' || agent) STORED
) STRICT, WITHOUT ROWID;
INSERT INTO action_index_12 SELECT * FROM action_index;
DROP TABLE action_index;
ALTER TABLE action_index_12 RENAME TO action_index;
CREATE INDEX action_index_open ON action_index(stage, deadline_ms)
    WHERE stage IN ('pending', 'approved', 'executing', 'uncertain');
CREATE TRIGGER action_index_no_delete BEFORE DELETE ON action_index
BEGIN SELECT RAISE(ABORT, 'action_index rows are never deleted'); END;
CREATE TRIGGER action_index_no_replace BEFORE INSERT ON action_index
WHEN EXISTS (SELECT 1 FROM action_index WHERE id = NEW.id OR action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'action_index rows are never replaced'); END;
CREATE TRIGGER intents_index AFTER INSERT ON intents
BEGIN
    SELECT RAISE(ABORT, 'intents is append-only: a key is never replaced')
    WHERE EXISTS (SELECT 1 FROM action_index WHERE action_key = NEW.action_key)
       OR EXISTS (SELECT 1 FROM archived_keys WHERE action_key = NEW.action_key);
    INSERT INTO action_index(id, action_key, logical_key, payload_sha256)
        VALUES ((SELECT coalesce(max(id), 0) + 1 FROM action_index), NEW.action_key, NEW.action_key, NEW.payload_sha256);
END;

-- Retained payloads and policy evaluations, one row per key, are read by
-- key only: keyed by it (WITHOUT ROWID), with no separate key index.
CREATE TABLE payloads_12 (
    action_key     TEXT NOT NULL PRIMARY KEY REFERENCES intents(action_key),
    payload_sha256 TEXT NOT NULL CHECK(length(payload_sha256) = 64 AND payload_sha256 NOT GLOB '*[^0-9a-f]*'),
    canonical      TEXT CHECK(canonical IS NULL OR length(canonical) >= 30),
    redacted       INTEGER NOT NULL CHECK(redacted IN (0, 1)),
    kind           TEXT NOT NULL,
    kind_sha256    TEXT NOT NULL CHECK(length(kind_sha256) = 64),
    target_sha256  TEXT NOT NULL CHECK(length(target_sha256) = 64),
    body_sha256    TEXT NOT NULL CHECK(length(body_sha256) = 64),
    agent          TEXT NOT NULL,
    recorded_ms    INTEGER NOT NULL,
    context_sha256 TEXT NOT NULL DEFAULT ''
        CHECK(context_sha256 = '' OR (length(context_sha256) = 64 AND context_sha256 NOT GLOB '*[^0-9a-f]*')),
    context        TEXT NOT NULL DEFAULT '' CHECK(length(context) <= 8192),
    CHECK((redacted = 1) = (canonical IS NULL))
) STRICT, WITHOUT ROWID;
INSERT INTO payloads_12 SELECT * FROM payloads;
DROP TABLE payloads;
ALTER TABLE payloads_12 RENAME TO payloads;
CREATE TRIGGER payloads_no_update BEFORE UPDATE ON payloads
BEGIN SELECT RAISE(ABORT, 'payloads is append-only'); END;
CREATE TRIGGER payloads_no_delete BEFORE DELETE ON payloads
BEGIN SELECT RAISE(ABORT, 'payloads is append-only'); END;
CREATE TRIGGER payloads_no_replace BEFORE INSERT ON payloads
WHEN EXISTS (SELECT 1 FROM payloads WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'payloads is append-only: a row is never replaced'); END;

CREATE TABLE policy_evals_12 (
    action_key  TEXT NOT NULL PRIMARY KEY REFERENCES intents(action_key),
    mode        TEXT NOT NULL CHECK(mode IN ('auto', 'approval', 'deny')),
    ttl_ms      INTEGER NOT NULL,
    rule_id     INTEGER REFERENCES policy_rules(id),
    pattern     TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    approvers   INTEGER NOT NULL DEFAULT 1 CHECK(approvers BETWEEN 1 AND 9),
    explain     TEXT NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID;
INSERT INTO policy_evals_12 SELECT * FROM policy_evals;
DROP TABLE policy_evals;
ALTER TABLE policy_evals_12 RENAME TO policy_evals;
CREATE TRIGGER policy_evals_no_update BEFORE UPDATE ON policy_evals
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only'); END;
CREATE TRIGGER policy_evals_no_delete BEFORE DELETE ON policy_evals
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only'); END;
CREATE TRIGGER policy_evals_no_replace BEFORE INSERT ON policy_evals
WHEN EXISTS (SELECT 1 FROM policy_evals WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only: a row is never replaced'); END;

-- A permit, one per key, is read by key or by its id.
CREATE TABLE permits_12 (
    action_key  TEXT NOT NULL PRIMARY KEY REFERENCES intents(action_key),
    permit_id   TEXT NOT NULL UNIQUE CHECK(length(permit_id) = 36),
    agent       TEXT NOT NULL,
    issued_ms   INTEGER NOT NULL,
    lease_ms    INTEGER NOT NULL CHECK(lease_ms > issued_ms)
) STRICT, WITHOUT ROWID;
INSERT INTO permits_12 SELECT * FROM permits;
DROP TABLE permits;
ALTER TABLE permits_12 RENAME TO permits;
CREATE TRIGGER permits_no_update BEFORE UPDATE ON permits
BEGIN SELECT RAISE(ABORT, 'permits is append-only'); END;
CREATE TRIGGER permits_no_delete BEFORE DELETE ON permits
BEGIN SELECT RAISE(ABORT, 'permits is append-only'); END;
CREATE TRIGGER permits_no_replace BEFORE INSERT ON permits
WHEN EXISTS (SELECT 1 FROM permits WHERE action_key = NEW.action_key OR permit_id = NEW.permit_id)
BEGIN SELECT RAISE(ABORT, 'permits is append-only: a row is never replaced'); END;

-- The event log loses its unique index on hash: an event is unique by its
-- seq (the rowid), and verify recomputes every hash from the one before,
-- so a second row with a copied hash is already a broken link. That
-- index was a page per commit and 70 bytes per event.
CREATE TABLE events_12 (
    seq        INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL,
    type       TEXT NOT NULL,
    actor      TEXT NOT NULL,
    detail     TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    prev_hash  TEXT NOT NULL CHECK(length(prev_hash) = 64 AND prev_hash NOT GLOB '*[^0-9a-f]*'),
    hash       TEXT NOT NULL CHECK(length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
    fact_table TEXT NOT NULL DEFAULT '',
    fact_row   TEXT NOT NULL DEFAULT '',
    fact_sha256 TEXT NOT NULL DEFAULT '',
    hv         INTEGER NOT NULL DEFAULT 1 CHECK(hv IN (1, 2))
) STRICT;
INSERT INTO events_12 SELECT * FROM events;
DROP TABLE events;
ALTER TABLE events_12 RENAME TO events;
CREATE INDEX events_key ON events(action_key, seq);
CREATE INDEX events_fact ON events(fact_table, fact_row);
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;
CREATE TRIGGER events_no_replace BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq)
BEGIN SELECT RAISE(ABORT, 'events is append-only: a row is never replaced'); END;

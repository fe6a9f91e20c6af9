-- Retention (schema 9, SPEC 11).
--
-- archive moves settled actions, with every fact and event that proves
-- them, into an archive ledger file, and keeps here only what keeps each
-- key's promise: its intents row (the seed's table: the payload digest a
-- retry is compared with), its final state and the archive it went to.
-- The events it removes leave runs of sequence numbers behind; each run is
-- kept as one row naming the hash before it and the hash it ends with, so
-- that the chain still links from the first event to the head. A
-- checkpoint event commits the archives row, which carries digests of the
-- archived keys and of the runs: verify proves both from it, and
-- verify --archive proves the archive file is the one it names.

CREATE TABLE archives (
    id               INTEGER PRIMARY KEY,
    file             TEXT NOT NULL CHECK(length(file) BETWEEN 1 AND 4096),
    ledger_id        TEXT NOT NULL,
    through_seq      INTEGER NOT NULL CHECK(through_seq >= 0),
    through_hash     TEXT NOT NULL CHECK(length(through_hash) = 64 AND through_hash NOT GLOB '*[^0-9a-f]*'),
    head_seq         INTEGER NOT NULL,
    head_hash        TEXT NOT NULL CHECK(length(head_hash) = 64 AND head_hash NOT GLOB '*[^0-9a-f]*'),
    keys             INTEGER NOT NULL CHECK(keys >= 0),
    keys_sha256      TEXT NOT NULL CHECK(length(keys_sha256) = 64 AND keys_sha256 NOT GLOB '*[^0-9a-f]*'),
    spans            INTEGER NOT NULL CHECK(spans >= 0),
    spans_sha256     TEXT NOT NULL CHECK(length(spans_sha256) = 64 AND spans_sha256 NOT GLOB '*[^0-9a-f]*'),
    settled_before_ms INTEGER NOT NULL,
    operator         TEXT NOT NULL,
    at_ms            INTEGER NOT NULL
) STRICT;

-- One row per archived key: with its intents row, what a retry needs.
-- archive_id names an archives row that commits after it, in the same
-- transaction (no foreign key: the row's digests cover these rows).
CREATE TABLE archived_keys (
    action_key     TEXT PRIMARY KEY,
    archive_id     INTEGER NOT NULL,
    state          TEXT NOT NULL CHECK(state IN ('denied','rejected','expired','succeeded','failed','reconciled')),
    result         TEXT NOT NULL DEFAULT '' CHECK(result IN ('','executed','not-executed')),
    context_sha256 TEXT NOT NULL DEFAULT ''
        CHECK(context_sha256 = '' OR (length(context_sha256) = 64 AND context_sha256 NOT GLOB '*[^0-9a-f]*'))
) STRICT, WITHOUT ROWID;

-- One row per run of removed events: first_prev is the prev_hash of its
-- first event, last_hash the hash of its last.
CREATE TABLE pruned_events (
    first_seq  INTEGER PRIMARY KEY,
    last_seq   INTEGER NOT NULL UNIQUE CHECK(last_seq >= first_seq),
    first_prev TEXT NOT NULL CHECK(length(first_prev) = 64 AND first_prev NOT GLOB '*[^0-9a-f]*'),
    last_hash  TEXT NOT NULL CHECK(length(last_hash) = 64 AND last_hash NOT GLOB '*[^0-9a-f]*'),
    archive_id INTEGER NOT NULL
) STRICT;

CREATE TRIGGER archives_no_update BEFORE UPDATE ON archives
BEGIN SELECT RAISE(ABORT, 'archives is append-only'); END;
CREATE TRIGGER archives_no_delete BEFORE DELETE ON archives
BEGIN SELECT RAISE(ABORT, 'archives is append-only'); END;
CREATE TRIGGER archived_keys_no_update BEFORE UPDATE ON archived_keys
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;
CREATE TRIGGER archived_keys_no_delete BEFORE DELETE ON archived_keys
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;
CREATE TRIGGER pruned_events_no_update BEFORE UPDATE ON pruned_events
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only'); END;
CREATE TRIGGER pruned_events_no_delete BEFORE DELETE ON pruned_events
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only'); END;

-- Evidence set aside (SPEC 7: a forged row never blocks a real decision).
-- A decisions row that no event commits (inserted by hand) holds the
-- key's one decision slot; an operator's real decision moves it here,
-- whole, as evidence committed by its own event, and takes the slot.
CREATE TABLE set_aside (
    id         INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL,
    fact_table TEXT NOT NULL CHECK(fact_table = 'decisions'),
    row_json   TEXT NOT NULL CHECK(length(row_json) <= 20000),
    operator   TEXT NOT NULL,
    at_ms      INTEGER NOT NULL
) STRICT;
CREATE INDEX set_aside_key ON set_aside(action_key, id);
CREATE TRIGGER set_aside_no_update BEFORE UPDATE ON set_aside
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only'); END;
CREATE TRIGGER set_aside_no_delete BEFORE DELETE ON set_aside
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only'); END;

-- A report may keep what the action returned (bounded), so that a caller
-- that lost the first answer can be given it again (the MCP proxy's
-- replay). The row hash covers it only where it is set: older reports
-- stay proven by their events.
ALTER TABLE reports ADD COLUMN result TEXT NOT NULL DEFAULT '' CHECK(length(result) <= 65536);

-- An archived key keeps its intent row: a shell's INSERT OR REPLACE of it
-- (which deletes without firing the delete trigger) must not bring it
-- back as a new key.
DROP TRIGGER intents_index;
CREATE TRIGGER intents_index AFTER INSERT ON intents
BEGIN
    SELECT RAISE(ABORT, 'intents is append-only: a key is never replaced')
    WHERE EXISTS (SELECT 1 FROM action_index WHERE action_key = NEW.action_key)
       OR EXISTS (SELECT 1 FROM archived_keys WHERE action_key = NEW.action_key);
    INSERT INTO action_index(action_key, logical_key, payload_sha256) VALUES (NEW.action_key, NEW.action_key, NEW.payload_sha256);
END;

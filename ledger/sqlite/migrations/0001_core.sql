-- Core evidence: intents (the seed fixture's exact shape), retained
-- payloads, the conflict log, the hash-chained event log, and the action
-- index (a projection of the facts, the one table that is updated).

-- Exactly the seed fixture's table, so that its record_intent() and
-- tollgate share one ledger. IF NOT EXISTS: a fixture-made file keeps its rows.
CREATE TABLE IF NOT EXISTS intents (
    action_key TEXT PRIMARY KEY, payload_sha256 TEXT NOT NULL,
    status TEXT NOT NULL CHECK(status = 'recorded'));

-- The table's shape is fixed, so its hash shape is held by a trigger.
CREATE TRIGGER intents_hash_shape BEFORE INSERT ON intents
WHEN length(NEW.payload_sha256) != 64 OR NEW.payload_sha256 GLOB '*[^0-9a-f]*'
BEGIN SELECT RAISE(ABORT, 'intents.payload_sha256 must be 64 lowercase hex digits'); END;
CREATE TRIGGER intents_no_update BEFORE UPDATE ON intents
BEGIN SELECT RAISE(ABORT, 'intents is append-only'); END;
CREATE TRIGGER intents_no_delete BEFORE DELETE ON intents
BEGIN SELECT RAISE(ABORT, 'intents is append-only'); END;

-- The retained payload of an intent tollgate recorded. canonical is NULL
-- when the caller asked for redaction; the per-field digests still let a
-- conflict say which field differs without keeping the text.
CREATE TABLE payloads (
    action_key     TEXT PRIMARY KEY REFERENCES intents(action_key),
    payload_sha256 TEXT NOT NULL CHECK(length(payload_sha256) = 64 AND payload_sha256 NOT GLOB '*[^0-9a-f]*'),
    canonical      TEXT CHECK(canonical IS NULL OR length(canonical) >= 30),
    redacted       INTEGER NOT NULL CHECK(redacted IN (0, 1)),
    kind           TEXT NOT NULL,
    kind_sha256    TEXT NOT NULL CHECK(length(kind_sha256) = 64),
    target_sha256  TEXT NOT NULL CHECK(length(target_sha256) = 64),
    body_sha256    TEXT NOT NULL CHECK(length(body_sha256) = 64),
    agent          TEXT NOT NULL,
    recorded_ms    INTEGER NOT NULL,
    CHECK((redacted = 1) = (canonical IS NULL))
) STRICT;

-- Every attempt to bind a recorded key to a different payload.
CREATE TABLE conflicts (
    id               INTEGER PRIMARY KEY,
    action_key       TEXT NOT NULL REFERENCES intents(action_key),
    stored_sha256    TEXT NOT NULL CHECK(length(stored_sha256) = 64),
    attempted_sha256 TEXT NOT NULL CHECK(length(attempted_sha256) = 64 AND attempted_sha256 NOT GLOB '*[^0-9a-f]*'),
    attempted        TEXT,
    redacted         INTEGER NOT NULL CHECK(redacted IN (0, 1)),
    differs          TEXT NOT NULL,
    agent            TEXT NOT NULL,
    at_ms            INTEGER NOT NULL
) STRICT;
CREATE INDEX conflicts_key ON conflicts(action_key);

-- The hash chain: each event's hash covers the previous hash and the event.
CREATE TABLE events (
    seq        INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL,
    type       TEXT NOT NULL,
    actor      TEXT NOT NULL,
    detail     TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    prev_hash  TEXT NOT NULL CHECK(length(prev_hash) = 64 AND prev_hash NOT GLOB '*[^0-9a-f]*'),
    hash       TEXT NOT NULL UNIQUE CHECK(length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*')
) STRICT;
CREATE INDEX events_key ON events(action_key, seq);

-- The action index: one row per key with its current stage, so that lists
-- page through an index instead of deriving every key's state. It is a
-- projection of the append-only facts above and below (verify checks it);
-- it may be updated, never deleted. Time-dependent states (expired,
-- uncertain after a lease) are derived from stage + deadline_ms at read time.
CREATE TABLE action_index (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL UNIQUE,
    logical_key TEXT NOT NULL,
    epoch       TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL DEFAULT '',
    agent       TEXT NOT NULL DEFAULT '',
    stage       TEXT NOT NULL DEFAULT 'recorded' CHECK(stage IN ('recorded','pending','approved','denied','rejected','executing','uncertain','succeeded','failed','reconciled')),
    deadline_ms INTEGER NOT NULL DEFAULT 0,
    updated_ms  INTEGER NOT NULL DEFAULT 0,
    -- Copies of the intent's facts, so that a retry is answered by one
    -- index lookup (verify checks that they agree with the facts).
    payload_sha256 TEXT NOT NULL,
    retained    INTEGER NOT NULL DEFAULT 0,
    redacted    INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX action_index_stage ON action_index(stage, deadline_ms);
CREATE INDEX action_index_logical ON action_index(logical_key);
CREATE INDEX action_index_agent ON action_index(agent, id);
CREATE INDEX action_index_kind ON action_index(kind, id);
CREATE INDEX action_index_epoch ON action_index(epoch, id);

-- Intents recorded by anyone (the seed fixture included) appear in the
-- index. A key already indexed means the insert replaced an existing intent
-- (INSERT OR REPLACE deletes without firing delete triggers unless
-- recursive_triggers is on, as in a plain sqlite3 shell): refuse it. A
-- BEFORE trigger cannot do this, as it would also fire for the fixture's
-- ON CONFLICT DO NOTHING retry.
CREATE TRIGGER intents_index AFTER INSERT ON intents
BEGIN
    SELECT RAISE(ABORT, 'intents is append-only: a key is never replaced')
    WHERE EXISTS (SELECT 1 FROM action_index WHERE action_key = NEW.action_key);
    INSERT INTO action_index(action_key, logical_key, payload_sha256) VALUES (NEW.action_key, NEW.action_key, NEW.payload_sha256);
END;
INSERT INTO action_index(action_key, logical_key, payload_sha256)
    SELECT action_key, action_key, payload_sha256 FROM intents WHERE true
    ON CONFLICT(action_key) DO NOTHING;

CREATE TRIGGER action_index_no_delete BEFORE DELETE ON action_index
BEGIN SELECT RAISE(ABORT, 'action_index rows are never deleted'); END;

CREATE TRIGGER payloads_no_update BEFORE UPDATE ON payloads
BEGIN SELECT RAISE(ABORT, 'payloads is append-only'); END;
CREATE TRIGGER payloads_no_delete BEFORE DELETE ON payloads
BEGIN SELECT RAISE(ABORT, 'payloads is append-only'); END;
CREATE TRIGGER conflicts_no_update BEFORE UPDATE ON conflicts
BEGIN SELECT RAISE(ABORT, 'conflicts is append-only'); END;
CREATE TRIGGER conflicts_no_delete BEFORE DELETE ON conflicts
BEGIN SELECT RAISE(ABORT, 'conflicts is append-only'); END;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;

-- INSERT OR REPLACE deletes the old row without firing delete triggers
-- unless recursive_triggers is on: refuse an insert that would replace.
CREATE TRIGGER payloads_no_replace BEFORE INSERT ON payloads
WHEN EXISTS (SELECT 1 FROM payloads WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'payloads is append-only: a row is never replaced'); END;
CREATE TRIGGER conflicts_no_replace BEFORE INSERT ON conflicts
WHEN EXISTS (SELECT 1 FROM conflicts WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'conflicts is append-only: a row is never replaced'); END;
CREATE TRIGGER events_no_replace BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq OR hash = NEW.hash)
BEGIN SELECT RAISE(ABORT, 'events is append-only: a row is never replaced'); END;
CREATE TRIGGER action_index_no_replace BEFORE INSERT ON action_index
WHEN EXISTS (SELECT 1 FROM action_index WHERE id = NEW.id OR action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'action_index rows are never replaced'); END;

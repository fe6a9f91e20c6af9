-- The seed fixture's two statements, as local_ledger.py runs them: the
-- first creates its table, the second records one intent (parameters:
-- action key, payload SHA-256). tollgate keeps this table's shape.
CREATE TABLE IF NOT EXISTS intents (
            action_key TEXT PRIMARY KEY, payload_sha256 TEXT NOT NULL,
            status TEXT NOT NULL CHECK(status = 'recorded'));
INSERT INTO intents VALUES (?, ?, 'recorded') ON CONFLICT(action_key) DO NOTHING;

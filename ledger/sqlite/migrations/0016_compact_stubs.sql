-- Compact archive stubs (issue 27: states as small integers).
--
-- After an archive, what the live file keeps per archived key is its
-- seed intents row (the seed's shape, which cannot change) and its stub.
-- At 100,000 actions with 90% archived, stubs were 9% of the live file,
-- and each spelled its state and result as words. They are stored here
-- as their positions in the vocabulary (0 and 1 take no bytes in an
-- SQLite record), which brings a 35-byte stub to about 27.
--
-- archived_keys stays, as a view with the same columns and values, so
-- that every query, verify's digest over an archive's stubs and the copy
-- to PostgreSQL read what they read before; inserting into it stores
-- the compact row. The vocabularies are spelled once each way, here.

CREATE TABLE archived_stubs (
    action_key     TEXT PRIMARY KEY,
    archive_id     INTEGER NOT NULL,
    -- denied, rejected, expired, succeeded, failed, reconciled
    state          INTEGER NOT NULL CHECK(state BETWEEN 0 AND 5),
    -- '', executed, not-executed
    result         INTEGER NOT NULL DEFAULT 0 CHECK(result BETWEEN 0 AND 2),
    context_sha256 TEXT NOT NULL DEFAULT ''
        CHECK(context_sha256 = '' OR (length(context_sha256) = 64 AND context_sha256 NOT GLOB '*[^0-9a-f]*'))
) STRICT, WITHOUT ROWID;

INSERT INTO archived_stubs(action_key, archive_id, state, result, context_sha256)
SELECT action_key, archive_id,
    CASE state WHEN 'denied' THEN 0 WHEN 'rejected' THEN 1 WHEN 'expired' THEN 2
               WHEN 'succeeded' THEN 3 WHEN 'failed' THEN 4 WHEN 'reconciled' THEN 5 END,
    CASE result WHEN '' THEN 0 WHEN 'executed' THEN 1 WHEN 'not-executed' THEN 2 END,
    context_sha256
FROM archived_keys;

DROP TABLE archived_keys;

CREATE VIEW archived_keys(action_key, archive_id, state, result, context_sha256) AS
SELECT action_key, archive_id,
    CASE state WHEN 0 THEN 'denied' WHEN 1 THEN 'rejected' WHEN 2 THEN 'expired'
               WHEN 3 THEN 'succeeded' WHEN 4 THEN 'failed' WHEN 5 THEN 'reconciled' END,
    CASE result WHEN 0 THEN '' WHEN 1 THEN 'executed' WHEN 2 THEN 'not-executed' END,
    context_sha256
FROM archived_stubs;

-- A word outside the vocabulary encodes as NULL, which the NOT NULL
-- constraint refuses; the message names the rule instead.
CREATE TRIGGER archived_keys_insert INSTEAD OF INSERT ON archived_keys
BEGIN
    SELECT RAISE(ABORT, 'archived_keys: state must be denied, rejected, expired, succeeded, failed or reconciled')
    WHERE NEW.state IS NULL OR NEW.state NOT IN ('denied', 'rejected', 'expired', 'succeeded', 'failed', 'reconciled');
    SELECT RAISE(ABORT, 'archived_keys: result must be empty, executed or not-executed')
    WHERE coalesce(NEW.result, '') NOT IN ('', 'executed', 'not-executed');
    INSERT INTO archived_stubs(action_key, archive_id, state, result, context_sha256) VALUES (
        NEW.action_key, NEW.archive_id,
        CASE NEW.state WHEN 'denied' THEN 0 WHEN 'rejected' THEN 1 WHEN 'expired' THEN 2
                       WHEN 'succeeded' THEN 3 WHEN 'failed' THEN 4 WHEN 'reconciled' THEN 5 END,
        CASE coalesce(NEW.result, '') WHEN '' THEN 0 WHEN 'executed' THEN 1 WHEN 'not-executed' THEN 2 END,
        coalesce(NEW.context_sha256, ''));
END;

CREATE TRIGGER archived_stubs_no_update BEFORE UPDATE ON archived_stubs
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;
CREATE TRIGGER archived_stubs_no_delete BEFORE DELETE ON archived_stubs
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;

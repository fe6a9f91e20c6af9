-- The chain head as a row (schema 7).
--
-- Appending an event reads the head and writes the next one. Until now
-- the head was the last row of events, which is safe only while one
-- writer at a time holds the whole ledger (SQLite's BEGIN IMMEDIATE). A
-- row of its own is what a transaction locks and advances on an engine
-- with many writers, and the state machine is written once for both. It
-- only moves forward and is never removed; verify checks it against the
-- last event.
CREATE TABLE chain_head (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    seq  INTEGER NOT NULL CHECK (seq >= 0),
    hash TEXT NOT NULL CHECK (length(hash) = 64)
) STRICT;

INSERT INTO chain_head(one, seq, hash)
SELECT 1, coalesce((SELECT max(seq) FROM events), 0),
       coalesce((SELECT hash FROM events ORDER BY seq DESC LIMIT 1), '0000000000000000000000000000000000000000000000000000000000000000');

CREATE TRIGGER chain_head_forward BEFORE UPDATE ON chain_head
WHEN NEW.one IS NOT OLD.one OR NEW.seq <= OLD.seq
BEGIN
    SELECT RAISE(ABORT, 'the chain head only moves forward');
END;

CREATE TRIGGER chain_head_kept BEFORE DELETE ON chain_head
BEGIN
    SELECT RAISE(ABORT, 'the chain head is never removed');
END;

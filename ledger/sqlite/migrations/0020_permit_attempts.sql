-- Schema 20: a permit remembers the attempt that was issued it (issue 44,
-- SPEC 12: a call whose answer is lost in transit).
--
-- A client of the service sends, with every retry of one guard call, an
-- attempt id it generated. The guard that issues the permit stores here
-- the SHA-256 of that id with the permit, committed by its own event in
-- the same transaction; a later guard of the same key, payload and
-- agent carrying the same id, while the permit is still executing, is
-- given that permit again instead of "executing elsewhere". Only the
-- digest is kept: status and export show the row, and an id read from
-- them would let another caller sharing the agent's name claim the
-- permit.
CREATE TABLE permit_attempts (
    action_key     TEXT PRIMARY KEY,
    permit_id      TEXT NOT NULL,
    agent          TEXT NOT NULL,
    attempt_sha256 TEXT NOT NULL CHECK(length(attempt_sha256) = 64 AND attempt_sha256 NOT GLOB '*[^0-9a-f]*'),
    at_ms          INTEGER NOT NULL
) STRICT;
CREATE TRIGGER permit_attempts_no_update BEFORE UPDATE ON permit_attempts
BEGIN SELECT RAISE(ABORT, 'permit_attempts is append-only'); END;
CREATE TRIGGER permit_attempts_no_delete BEFORE DELETE ON permit_attempts
BEGIN SELECT RAISE(ABORT, 'permit_attempts is append-only'); END;
CREATE TRIGGER permit_attempts_no_replace BEFORE INSERT ON permit_attempts
WHEN EXISTS (SELECT 1 FROM permit_attempts WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'permit_attempts is append-only: a row is never replaced'); END;

-- Compact storage (schema 12, issue 27), as on SQLite: secondary indexes
-- serve open work. The five indexes over every action (stage, logical
-- key, agent, kind, epoch) give way to one partial index over the actions
-- still waiting on someone; settled history is read by key, in chain
-- order, or by a scan that shows its progress.
DROP INDEX action_index_stage;
DROP INDEX action_index_logical;
DROP INDEX action_index_agent;
DROP INDEX action_index_kind;
DROP INDEX action_index_epoch;
CREATE INDEX action_index_open ON action_index(stage, deadline_ms)
    WHERE stage IN ('pending', 'approved', 'executing', 'uncertain');

-- An event is unique by its seq, and verify recomputes every hash from
-- the one before it, so a copied hash is already a broken link: the
-- unique index on hash was an index write per event for nothing.
ALTER TABLE events DROP CONSTRAINT IF EXISTS events_hash_key;

-- An identical retry's answer as one stored value (fastCols in state.go,
-- the same expression as SQLite's), so that the lookup reads one column
-- on both engines.
ALTER TABLE action_index ADD COLUMN answer text COLLATE "C" GENERATED ALWAYS AS
    (payload_sha256 || stage || ' ' || deadline_ms::text || ' ' || (retained + 2 * redacted)::text || context_sha256 || ' ' || agent) STORED;

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
-- query plans.
DROP INDEX action_index_stage;
DROP INDEX action_index_logical;
DROP INDEX action_index_agent;
DROP INDEX action_index_kind;
DROP INDEX action_index_epoch;
CREATE INDEX action_index_open ON action_index(stage, deadline_ms)
    WHERE stage IN ('pending', 'approved', 'executing', 'uncertain');

-- Schema 14 is PostgreSQL's (a guard in one server-side call,
-- tollgate_guard). A SQLite ledger's writer is in the guarding process
-- already: there is no round trip to save. The version moves with
-- PostgreSQL's so that one number names one schema on both engines.
SELECT 1;

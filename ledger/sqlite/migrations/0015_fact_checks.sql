-- Schema 15 is PostgreSQL's (the database checks each payload row
-- against its canonical text, agents' names, and which events an
-- agent's role may append). A SQLite ledger is written only by the
-- tollgate process, which checks the same before it writes. The version
-- moves with PostgreSQL's so that one number names one schema on both
-- engines.
SELECT 1;

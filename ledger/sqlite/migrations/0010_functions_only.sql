-- Schema 10 is PostgreSQL's (agents and operators write only through
-- functions; one agent's payload bodies hidden from another's role). A
-- SQLite ledger has no roles: its file's permissions are its boundary
-- (see the trust model). The version moves with PostgreSQL's so that one
-- number names one schema on both engines.
SELECT 1;

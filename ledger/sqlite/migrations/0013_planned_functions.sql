-- Schema 13 is PostgreSQL's (its server functions kept planned for the
-- session). The version moves with PostgreSQL's so that one number names
-- one schema on both engines.
SELECT 1;

-- Signed statements bound to their place (schema 8); see the SQLite
-- migration of the same number. A signature counts once.
CREATE UNIQUE INDEX signatures_once ON signatures(signature);

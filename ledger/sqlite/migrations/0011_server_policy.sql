-- Schema 11 is PostgreSQL's (the database enforces the policy: an
-- evaluation must be the rules' own decision, a permit must follow from
-- an evaluation or an approval, a report must come from the permit's
-- holder). A SQLite ledger has no roles: its file's permissions are its
-- boundary (see the trust model), and the state machine applies the same
-- rules in the writing process. The version moves with PostgreSQL's so
-- that one number names one schema on both engines.
SELECT 1;

-- Schema 35 (issue 42): set_aside takes a forged vote as well as a
-- forged decision, so that an SQLite ledger whose operator set a forged
-- vote aside copies here. On PostgreSQL no agent role can write a vote;
-- one no event commits was made by the schema's owner, and a real vote
-- it would block is refused as an integrity failure naming its row.
ALTER TABLE set_aside DROP CONSTRAINT set_aside_fact_table_check;
ALTER TABLE set_aside ADD CONSTRAINT set_aside_fact_table_check CHECK (fact_table IN ('decisions', 'votes'));

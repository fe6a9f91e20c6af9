-- Schema 35 (issue 42): set_aside takes a forged vote as well as a
-- forged decision, so that an SQLite ledger whose operator set a forged
-- vote aside copies here. On PostgreSQL no agent role can write a vote;
-- one no event commits was made by the schema's owner.
ALTER TABLE set_aside DROP CONSTRAINT set_aside_fact_table_check;
ALTER TABLE set_aside ADD CONSTRAINT set_aside_fact_table_check CHECK (fact_table IN ('decisions', 'votes'));

-- An operator's real vote sets aside a vote row no event commits, which
-- only the schema's owner can have written and which holds the
-- operator's one vote on the request: the row is first copied to
-- set_aside (by the operator's own insert, committed by its event), and
-- this function, the owner's, then removes it from votes. It removes
-- nothing else: a row an event commits, sealed or pending, is a vote, and
-- a row not set aside in this very transaction stays.
CREATE FUNCTION tollgate_drop_forged_vote(p_id bigint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM events e WHERE e.fact_table = 'votes' AND e.fact_row = p_id::text)
       OR EXISTS (SELECT 1 FROM pending_events e WHERE e.fact_table = 'votes' AND e.fact_row = p_id::text) THEN
        RAISE EXCEPTION 'votes row % is committed by an event: a vote, not a forgery', p_id USING ERRCODE = 'TG001';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM set_aside s WHERE s.fact_table = 'votes'
                   AND (s.row_json::jsonb ->> 'id')::bigint = p_id AND tollgate_xmin_mine(s.xmin)) THEN
        RAISE EXCEPTION 'votes row % was not set aside in this transaction', p_id USING ERRCODE = 'TG001';
    END IF;
    ALTER TABLE votes DISABLE TRIGGER votes_append_only;
    ALTER TABLE votes DISABLE TRIGGER votes_no_truncate;
    DELETE FROM votes WHERE id = p_id;
    ALTER TABLE votes ENABLE TRIGGER votes_append_only;
    ALTER TABLE votes ENABLE TRIGGER votes_no_truncate;
END $$;
REVOKE ALL ON FUNCTION tollgate_drop_forged_vote(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_drop_forged_vote(bigint) TO tollgate_operator;

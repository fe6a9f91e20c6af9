-- Schema 33: a key transaction ends in one call (issue 25: no lock held
-- across a client round trip; TestPostgresRoundTrips).
--
-- A transaction of the client's path (a vote, a decision, a
-- reconciliation, a change of rules, and every key the one-call
-- functions leave to the client) ended with up to three kinds of
-- statement: tollgate_wait_head (a decision's bounded wait for the chain
-- head, schema 30), tollgate_append_events, and tollgate_refresh_index
-- once per key it moved. A decision sent them in that order, since a
-- vote counts once its event commits it, so it held the chain head for
-- three round trips and its COMMIT; the others refreshed first and
-- appended last. tollgate_flush makes them one statement, in the same
-- order, so no transaction of a key holds the head across any round trip
-- but its COMMIT's.
--
-- It is SECURITY INVOKER: each function it calls runs as it does when
-- called alone, under the caller's grants and checks (tollgate_wait_head
-- stays an operator's), so it gives no role anything that the separate
-- statements did not.

CREATE FUNCTION tollgate_flush(p_events_first boolean,
    p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[],
    p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[],
    p_index_keys text[], p_index_targets text[], OUT o_seq bigint, OUT o_hash text)
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
    i int;
BEGIN
    IF cardinality(p_index_keys) IS DISTINCT FROM cardinality(p_index_targets) THEN
        RAISE EXCEPTION 'tollgate_flush: the keys to refresh and their targets are arrays of the same length' USING ERRCODE = '22023';
    END IF;
    IF NOT p_events_first THEN
        FOR i IN 1 .. coalesce(cardinality(p_index_keys), 0) LOOP
            PERFORM tollgate_refresh_index(p_index_keys[i], p_index_targets[i]);
        END LOOP;
    END IF;
    IF coalesce(cardinality(p_keys), 0) > 0 THEN
        IF p_events_first THEN
            PERFORM tollgate_wait_head();
        END IF;
        SELECT a.o_seq, a.o_hash INTO o_seq, o_hash
            FROM tollgate_append_events(p_keys, p_types, p_actors, p_details, p_ats, p_fact_tables, p_fact_rows, p_fact_sha256s) a;
    END IF;
    IF p_events_first THEN
        FOR i IN 1 .. coalesce(cardinality(p_index_keys), 0) LOOP
            PERFORM tollgate_refresh_index(p_index_keys[i], p_index_targets[i]);
        END LOOP;
    END IF;
END $$;
REVOKE ALL ON FUNCTION tollgate_flush(boolean, text[], text[], text[], text[], bigint[], text[], text[], text[], text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_flush(boolean, text[], text[], text[], text[], bigint[], text[], text[], text[], text[], text[])
    TO tollgate_agent, tollgate_operator;

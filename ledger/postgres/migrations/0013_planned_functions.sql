-- The functions every guard calls, in PL/pgSQL rather than SQL: a SQL
-- function's body is parsed and planned again on every call, a PL/pgSQL
-- function's statements once per session (BenchmarkPostgresAgents; issue
-- 25). tollgate_refresh_index is made anew by the state machine's step of
-- this migration (its text lives in package ledger). Same results, same
-- grants (CREATE OR REPLACE keeps them).
CREATE OR REPLACE FUNCTION tollgate_record_intent(p_key text, p_sha256 text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO intents VALUES (p_key, p_sha256, 'recorded') ON CONFLICT (action_key) DO NOTHING;
END $$;

CREATE OR REPLACE FUNCTION tollgate_lock_head(OUT o_seq bigint, OUT o_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1 FOR UPDATE;
END $$;

-- The event hash (byte for byte ledger/events.go's eventHashV2, as schema
-- 8 defined it), computed by a loop instead of an aggregate query that a
-- SQL function plans again for each of a guard's three events.
CREATE OR REPLACE FUNCTION tollgate_event_hash(prev text, seq bigint, key text, typ text, actor text, detail text, at_ms bigint,
    fact_table text, fact_row text, fact_sha256 text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog AS $$
DECLARE
    v_all bytea := '\x';
    v_field text;
    v_bytes bytea;
BEGIN
    FOREACH v_field IN ARRAY ARRAY['v2', prev, seq::text, key, typ, actor, detail, at_ms::text, fact_table, fact_row, fact_sha256] LOOP
        v_bytes := convert_to(v_field, 'UTF8');
        v_all := v_all || convert_to(octet_length(v_bytes)::text || ':', 'UTF8') || v_bytes;
    END LOOP;
    RETURN encode(sha256(v_all), 'hex');
END $$;

-- Key transactions (issue 25). Until now every writing transaction locked
-- the chain head first and held it through all its round trips and its
-- commit, so one guard at a time ran on the whole cluster. Now a
-- transaction that moves one action (guard, record, report) takes
-- tollgate_lock_key: the ledger-wide lock shared and its key's lock alone
-- (every epoch of a key is one logical key), and it appends its events
-- with tollgate_append_events, one call just before COMMIT, which is the
-- only time it holds the head. Writers of ledger-wide facts (rules,
-- operators, epochs, decisions, archives) keep locking the head first
-- through tollgate_lock_head, which now takes the ledger-wide lock alone:
-- they wait for the key transactions under way, which cannot start while
-- one of them waits or runs. The lock classes are two numbers of their
-- own ('toll' and the next), the key's class keyed by its text's hash; a
-- collision only makes two keys wait for each other.
CREATE FUNCTION tollgate_lock_key(p_logical text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1953459308, 0);
    PERFORM pg_advisory_xact_lock(1953459309, hashtext(p_logical));
    -- A record in the WAL even when nothing else is written (a retry
    -- that finds its answer stored): its COMMIT then waits for
    -- synchronous standbys like any write, so no caller is answered from
    -- a fact a failover could still lose (TestPostgresCommitAnswerLost).
    -- A transaction id alone would not: PostgreSQL skips the wait for a
    -- transaction that wrote no WAL before its commit record.
    PERFORM pg_logical_emit_message(true, 'tollgate', '');
    -- The transaction's time, read once the locks are held.
    RETURN (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
END $$;

CREATE OR REPLACE FUNCTION tollgate_lock_head(OUT o_seq bigint, OUT o_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(1953459308, 0);
    SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1 FOR UPDATE;
END $$;

-- Appends a key transaction's events in order after the head and moves
-- the head once; returns the last. As tollgate_append_event, the number,
-- the previous hash and the hash are the database's.
CREATE FUNCTION tollgate_append_events(p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[],
    p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], OUT o_seq bigint, OUT o_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_prev text;
    i int;
BEGIN
    IF cardinality(p_keys) IS DISTINCT FROM cardinality(p_types) OR cardinality(p_keys) IS DISTINCT FROM cardinality(p_actors)
        OR cardinality(p_keys) IS DISTINCT FROM cardinality(p_details) OR cardinality(p_keys) IS DISTINCT FROM cardinality(p_ats)
        OR cardinality(p_keys) IS DISTINCT FROM cardinality(p_fact_tables) OR cardinality(p_keys) IS DISTINCT FROM cardinality(p_fact_rows)
        OR cardinality(p_keys) IS DISTINCT FROM cardinality(p_fact_sha256s) OR coalesce(cardinality(p_keys), 0) = 0 THEN
        RAISE EXCEPTION 'tollgate_append_events takes one or more events, each field an array of the same length' USING ERRCODE = '22023';
    END IF;
    SELECT h.seq, h.hash INTO o_seq, o_hash FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    FOR i IN 1 .. cardinality(p_keys) LOOP
        v_prev := o_hash;
        o_seq := o_seq + 1;
        o_hash := tollgate_event_hash(v_prev, o_seq, p_keys[i], p_types[i], p_actors[i], p_details[i], p_ats[i],
            p_fact_tables[i], p_fact_rows[i], p_fact_sha256s[i]);
        INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv)
            VALUES (o_seq, p_keys[i], p_types[i], p_actors[i], p_details[i], p_ats[i], v_prev, o_hash,
                p_fact_tables[i], p_fact_rows[i], p_fact_sha256s[i], 2);
    END LOOP;
    UPDATE chain_head SET seq = o_seq, hash = o_hash WHERE one = 1;
END $$;

REVOKE EXECUTE ON FUNCTION tollgate_lock_key(text),
    tollgate_append_events(text[], text[], text[], text[], bigint[], text[], text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_lock_key(text),
    tollgate_append_events(text[], text[], text[], text[], bigint[], text[], text[], text[]) TO tollgate_agent, tollgate_operator;

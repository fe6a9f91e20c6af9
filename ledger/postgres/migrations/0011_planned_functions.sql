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

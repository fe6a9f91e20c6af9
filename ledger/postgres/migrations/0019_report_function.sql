-- Schema 19: a report in one call (issue 25). A report took seven round
-- trips (the key's locks, one read, the fact, the projection, the held
-- events, COMMIT), and its events went to the chain head before COMMIT,
-- so every report held the head for a round trip and its commit, as
-- guards did before schema 16. tollgate_report takes the common report
-- whole, in its own transaction: the permit holder's first report, before
-- the lease ends, of a key no operator has reconciled, is filed as
-- ledger/report.go reportTx files it (the accepted report, its event,
-- the key moved to the outcome's stage), and its event is appended at the
-- head when the head is free and committed pending otherwise, sealed
-- after the commit as a guard's are (schema 16). Anything else (no
-- permit, another permit's id, a report already accepted, a late one, a
-- reconciled key, an archived one) is answered 'full', with nothing
-- written, and the client's key transaction decides and logs it, as
-- before. The report's rules are the reports table's trigger's
-- (tollgate_check_report): the permit's id and its role, the database's
-- time, the lease.
CREATE FUNCTION tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text,
    p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_logical text;
    v_permit text;
    v_lease bigint;
    v_row reports;
    v_hash text;
    v_detail text;
BEGIN
    -- The caller's attempt ends in p_wait_ms (tollgate_guard's rule).
    IF p_wait_ms > 0 THEN
        PERFORM set_config('lock_timeout', p_wait_ms::text, true);
    END IF;
    IF p_key IS NULL OR p_key !~ '^(hsr1:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:)?[a-z0-9-]+(:[a-z0-9-]+)*$' THEN
        RAISE EXCEPTION 'tollgate_report: the key is not an action key' USING ERRCODE = '22023';
    END IF;
    IF p_permit_id IS NULL OR p_outcome IS NULL OR p_outcome NOT IN ('succeeded', 'failed', 'unknown') OR p_ref IS NULL
        OR p_latency_ms IS NULL OR p_latency_ms < 0 OR p_result IS NULL THEN
        RAISE EXCEPTION 'tollgate_report: the arguments do not describe one report of key %', p_key USING ERRCODE = '22023';
    END IF;
    v_logical := CASE WHEN starts_with(p_key, 'hsr1:') THEN substr(p_key, 43) ELSE p_key END;
    -- The locks a key transaction takes (tollgate_lock_key): this call
    -- and the client's path exclude each other, and no reconciliation,
    -- fence or archive of the key runs meanwhile. The time is read once
    -- the locks are held.
    PERFORM pg_advisory_xact_lock_shared(1953459308, 0);
    PERFORM pg_advisory_xact_lock(1953459309, hashtext(v_logical));
    o_now := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    o_path := 'full';
    SELECT p.permit_id, p.lease_ms INTO v_permit, v_lease FROM permits p WHERE p.action_key = p_key;
    IF NOT FOUND OR v_permit <> p_permit_id OR o_now >= v_lease
        OR EXISTS (SELECT 1 FROM reports r WHERE r.action_key = p_key AND r.kind = 'accepted')
        OR EXISTS (SELECT 1 FROM reconciliations c WHERE c.action_key = p_key)
        OR EXISTS (SELECT 1 FROM archived_keys a WHERE a.action_key = p_key) THEN
        RETURN;
    END IF;
    INSERT INTO reports (action_key, permit_id, outcome, ref, latency_ms, kind, at_ms, result)
        VALUES (p_key, p_permit_id, p_outcome, p_ref, p_latency_ms, 'accepted', o_now, p_result) RETURNING * INTO v_row;
    v_hash := tollgate_fact_hash('reports', to_jsonb(v_row));
    -- The event's detail as the client's json.Marshal writes the map
    -- (keys sorted), so that the chain's hash is the same either way.
    v_detail := '{"latency_ms":' || p_latency_ms || ',"outcome":' || tollgate_go_json(p_outcome) || ',"ref":' || tollgate_go_json(p_ref) || '}';
    PERFORM tollgate_refresh_index(p_key, NULL::text);
    -- The head only when it is free, as tollgate_guard takes it.
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    ELSE
        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE SKIP LOCKED;
    END IF;
    IF FOUND THEN
        PERFORM tollgate_append_event(p_key, 'report_accepted', p_permit_id, v_detail, o_now, 'reports', v_row.id::text, v_hash);
    ELSE
        INSERT INTO pending_events (action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256)
            VALUES (p_key, 'report_accepted', p_permit_id, v_detail, o_now, 'reports', v_row.id::text, v_hash) RETURNING id INTO o_unsealed;
    END IF;
    o_path := 'new';
END $$;

REVOKE ALL ON FUNCTION tollgate_report(text, text, text, text, bigint, text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_report(text, text, text, text, bigint, text, bigint) TO tollgate_agent, tollgate_operator;

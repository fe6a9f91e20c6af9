-- Schema 22: a report in one call skips the checks it already made, as
-- the guard does from schema 21. tollgate_report marks its transaction
-- (tollgate_private.guard_writing) from its report's row to its event,
-- and removes the mark before it returns (an error rolls it back with
-- everything else), so no statement of the caller's ever runs under it.
-- Skipped for the report's own rows: the event's check (its fact row and
-- hash are the ones this call wrote and computed) and the reports row's
-- deferred check that an event commits it (this call appends that event).
-- Kept: tollgate_check_report, the reports' rules for every writer.

DROP TRIGGER reports_committed_by_an_event ON reports;
CREATE CONSTRAINT TRIGGER reports_committed_by_an_event AFTER INSERT ON reports DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NOT tollgate_guard_writing()) EXECUTE FUNCTION tollgate_check_fact_committed();

CREATE OR REPLACE FUNCTION tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text,
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
    -- The guard's mark (schema 21) from the report's row to its event:
    -- this call computes the event's fact hash from the row it has just
    -- written and appends that event itself, so the event's check and
    -- the row's deferred "committed by an event" check would only redo
    -- it. The reports table's own rules (tollgate_check_report: the
    -- permit's id and role, the time, the lease) run as for any writer.
    INSERT INTO tollgate_private.guard_writing VALUES (txid_current());
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
    DELETE FROM tollgate_private.guard_writing WHERE txid = txid_current();
    o_path := 'new';
END $$;


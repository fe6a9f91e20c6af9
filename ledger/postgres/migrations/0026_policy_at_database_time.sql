-- Schema 26: a policy decision the database's clock would not make is
-- refused (TestPostgresGuardHoleAgentPicksWindowTime, found by the
-- attacking pass). A fact's time is the client's, checked within 60 s of
-- the database's clock (tollgate_clock_ok), and the rules were decided
-- at that time: an agent whose clock ran slow read a schedule window up
-- to a minute late, and was issued an auto window's permit after it
-- closed. SPEC 8 has the database's clock judge.
--
-- The decision function keeps its name and arguments, so its callers
-- (the guard's and record's functions, the evaluation's check) are
-- unchanged: the old body moves into the private schema, and the public
-- name decides at the time given and, when that time is more than a
-- second from the database's clock, also at the database's time; if the
-- two differ the call fails with 40001, which clients retry, until the
-- client's clock has passed the window's edge too (an honest client
-- whose clock is off by the skew waits that long at an edge, and is
-- never answered by its own clock). Not where the bound is lifted (a
-- negative tollgate.clock_skew_ms: tests on an injected clock) or where
-- the owner copies a ledger with its own times (tollgate_copying).
ALTER FUNCTION tollgate_policy_decide(text, text, text, text, bigint) SET SCHEMA tollgate_private;
ALTER FUNCTION tollgate_private.tollgate_policy_decide(text, text, text, text, bigint) RENAME TO policy_decide_at;

CREATE FUNCTION tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint,
    OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_now bigint;
    v_mode text;
    v_rule bigint;
    v_ttl bigint;
    v_approvers bigint;
    v_pattern text;
BEGIN
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern INTO o_mode, o_rule, o_ttl_ms, o_approvers, o_pattern
        FROM tollgate_private.policy_decide_at(p_kind, p_target, p_agent, p_context, p_at_ms) d;
    v_now := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    -- tollgate_clock_ok(0) holds only where the bound is lifted.
    IF abs(v_now - p_at_ms) <= 1000 OR tollgate_clock_ok(0) OR tollgate_copying() THEN
        RETURN;
    END IF;
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern INTO v_mode, v_rule, v_ttl, v_approvers, v_pattern
        FROM tollgate_private.policy_decide_at(p_kind, p_target, p_agent, p_context, v_now) d;
    IF (v_mode, v_rule, v_ttl, v_approvers, v_pattern) IS DISTINCT FROM (o_mode, o_rule, o_ttl_ms, o_approvers, o_pattern) THEN
        RAISE EXCEPTION 'the rules decide kind % otherwise at the database''s time than at the client''s (% ms apart): the database''s clock judges (SPEC 8); retry once the client''s clock agrees',
            p_kind, v_now - p_at_ms USING ERRCODE = 'serialization_failure';
    END IF;
END $$;
REVOKE ALL ON FUNCTION tollgate_policy_decide(text, text, text, text, bigint) FROM PUBLIC;

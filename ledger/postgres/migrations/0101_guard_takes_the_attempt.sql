-- Schema 101 (written as development schema 43): the one-call guard takes the guard's attempt id (issue 44).
--
-- Up to here tollgate_guard stored no attempt (schema 38), so a guard
-- that carried one (every call through `tollgate serve`, whose clients
-- send one per call) took the client's key transaction: about fifteen
-- round trips in place of one, and a read transaction before them that
-- looked the attempt up. Through the service on PostgreSQL a new key
-- was guarded at a third of the rate of the same guard without an id.
--
-- Now tollgate_guard takes, as its last argument, the SHA-256 of the
-- call's attempt id (lowercase hex; NULL: no attempt) and:
--   - stores it with the permit an auto rule issues, in the same call:
--     the permit_attempts row and its attempt_recorded event, as the key
--     transaction writes them (ledger/attempts.go recordAttempt), held
--     by the same triggers (the row names the permit this transaction
--     issued, to that permit's agent, an agent the login role may act
--     as; its hash is its event's);
--   - answers a retry of an executing key whose running permit was
--     issued to that digest, stored with the permit's own agent, with
--     lease still the key's deadline: path 'attempt', the permit's id,
--     lease and agent (o_agent), and the key's projection row
--     (o_answer). The client gives the permit only to a caller whose
--     agent name is the permit's (after the names' normalization, which
--     Go does); any other caller is answered from the projection row, as
--     every guard of an executing key is. Without the digest no caller
--     learns the permit's id.
-- A key granted by an approval, a rule with a condition, and everything
-- else the function leaves to the client still take the key
-- transaction, which stores the attempt as before.
--
-- The argument list changes, so this is a new function of 14 arguments
-- (its whole definition below) with one more result; the 13-argument
-- one stays, as a call of it with no attempt, for any caller written
-- against schemas 14-42.
CREATE FUNCTION tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text,
    p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, p_attempt_sha256 text,
    OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint,
    OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint, OUT o_agent text)
 RETURNS record
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO public, pg_temp
 SET plan_cache_mode TO 'force_generic_plan'
 SET extra_float_digits TO '3'
 SET timezone_abbreviations TO 'Default'
 SET "TimeZone" TO 'UTC'
 SET "DateStyle" TO 'ISO, MDY'
 SET "IntervalStyle" TO 'postgres'
 SET lc_numeric TO 'C'
 SET standard_conforming_strings TO 'on'
AS $function$
DECLARE
    v_logical text;
    v_epoch text;
    v_go boolean;
    v_answer text;
    v_stage text;
    v_deadline bigint;
    v_sha text;
    v_ctx text;
    v_types text[];
    v_details text[];
    v_tables text[];
    v_hashes text[];
    v_tags text[];
    v_vals text[];
BEGIN
    SELECT k.o_logical, k.o_epoch INTO v_logical, v_epoch FROM tollgate_private.key_parse('tollgate_guard', p_key, p_wait_ms) k;
    IF p_attempt_sha256 !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'tollgate_guard: an attempt is sent as the SHA-256 of its id, in lowercase hex (key %)', p_key USING ERRCODE = '22023';
    END IF;
    -- An identical retry that needs no new step: answered from the
    -- projection, without a lock, as the client's fast path answers it
    -- (ledger/state.go fastLookup), and only for the answers that tell
    -- the caller to wait or stop. A running permit this very call's id
    -- names, issued to this role, is the call's own: an earlier attempt's
    -- commit whose answer was lost. An answer to such a retry (p_retry:
    -- an earlier attempt of the call may have committed) leaves a record
    -- in the WAL, as tollgate_lock_key does, so that its commit waits for
    -- synchronous standbys: no caller is answered from a fact a failover
    -- could still lose (TestPostgresCommitAnswerLost).
    SELECT x.answer, x.stage, x.deadline_ms, x.payload_sha256, x.context_sha256 INTO v_answer, v_stage, v_deadline, v_sha, v_ctx
        FROM action_index x WHERE x.action_key = p_key;
    o_now := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    IF FOUND THEN
        o_path := 'full';
        IF v_sha IS DISTINCT FROM p_sha256 OR v_ctx IS DISTINCT FROM p_context_sha256 THEN
            RETURN;
        END IF;
        IF p_retry THEN
            PERFORM pg_logical_emit_message(true, 'tollgate', '');
        END IF;
        IF v_stage = 'executing' AND v_deadline > o_now THEN
            SELECT p.permit_id, p.lease_ms INTO o_permit_id, o_lease_ms FROM permits p
                WHERE p.action_key = p_key AND p.permit_id = p_permit_id AND p.db_role = session_user;
            IF FOUND THEN
                o_path := 'own';
                RETURN;
            END IF;
            -- The permit issued to this call's attempt id (schema 101): a
            -- retry of a call whose answer was lost, carrying the same
            -- id, whose running permit is still the one the attempt was
            -- issued (its lease the key's deadline), stored with the
            -- permit's own agent. The client gives it to the caller only
            -- when the caller's agent name is that one (o_agent, compared
            -- after the names' normalization, approvals.SameName);
            -- anyone else is answered from the projection (o_answer).
            IF p_attempt_sha256 IS NOT NULL THEN
                SELECT p.permit_id, p.lease_ms, p.agent INTO o_permit_id, o_lease_ms, o_agent FROM permit_attempts t
                    JOIN permits p ON p.action_key = t.action_key AND p.permit_id = t.permit_id AND p.agent = t.agent
                    WHERE t.action_key = p_key AND t.attempt_sha256 = p_attempt_sha256 AND p.lease_ms = v_deadline;
                IF FOUND THEN
                    o_path := 'attempt';
                    o_answer := v_answer;
                    RETURN;
                END IF;
            END IF;
        END IF;
        IF v_stage IN ('executing', 'uncertain', 'succeeded', 'failed', 'denied') OR v_stage = 'pending' AND (v_deadline <= o_now
            OR v_epoch = coalesce((SELECT e.epoch FROM epochs e ORDER BY e.seq DESC LIMIT 1), '')) THEN
            o_path := 'index';
            o_answer := v_answer;
        END IF;
        RETURN;
    END IF;

    -- A new key: the guard's own arguments, then the record's checks and
    -- locks (key_new).
    IF p_lease_ms IS NULL OR p_lease_ms NOT BETWEEN 1000 AND 604800000
        OR p_permit_id IS NULL OR p_permit_id !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
        RAISE EXCEPTION 'tollgate_guard: the arguments do not describe one guard of key %', p_key USING ERRCODE = '22023';
    END IF;
    SELECT k.o_now, k.o_go INTO o_now, v_go FROM tollgate_private.key_new('tollgate_guard', p_key, v_logical, v_epoch, p_sha256, p_canonical,
        p_kind, p_target, p_body_sha256, p_agent, p_context_sha256, p_context) k;
    o_path := 'full';
    IF NOT v_go THEN
        RETURN;
    END IF;
    -- A rule with a condition stores what its condition read, which the
    -- client's evaluator explains.
    IF EXISTS (SELECT 1 FROM policy_rules r WHERE r.condition <> '' AND tollgate_pattern_matches(r.pattern, p_kind)) THEN
        RETURN;
    END IF;
    IF p_canonical IS NULL THEN
        -- The target a rule reads is the one sent, taken only when its
        -- digest is the payload's (tollgate_action_target).
        PERFORM set_config('tollgate.target', p_target, true);
    END IF;
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern INTO o_mode, o_rule, o_ttl_ms, o_approvers, o_pattern
        FROM tollgate_policy_decide(p_kind, p_target, p_agent, p_context, o_now) d;

    SELECT w.o_types, w.o_details, w.o_tables, w.o_hashes INTO v_types, v_details, v_tables, v_hashes
        FROM tollgate_private.record_write(p_key, p_sha256, p_canonical, p_kind, p_target, p_body_sha256, p_agent, p_context_sha256, p_context, o_now) w;

    -- The evaluation (ledger/guard.go evaluatePolicy): a rule without a
    -- condition explains nothing beyond its id and pattern.
    INSERT INTO policy_evals (action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain)
        VALUES (p_key, o_mode, o_ttl_ms, o_rule, o_pattern, o_now, o_approvers, '');
    v_tags := ARRAY['s', 's', 'i', 'i', 's', 'i'];
    v_vals := ARRAY[p_key, o_mode, o_ttl_ms::text, o_rule::text, o_pattern, o_now::text];
    IF o_approvers <> 1 THEN
        v_tags := v_tags || ARRAY['i'];
        v_vals := v_vals || ARRAY[o_approvers::text];
    END IF;
    v_types := v_types || ARRAY['policy_evaluated'];
    v_details := v_details || ARRAY['{"approvers":' || o_approvers || ',"mode":' || tollgate_go_json(o_mode) || ',"pattern":'
        || tollgate_go_json(o_pattern) || ',"ttl_ms":' || o_ttl_ms || '}'];
    v_tables := v_tables || ARRAY['policy_evals'];
    v_hashes := v_hashes || ARRAY[tollgate_row_hash('policy_evals', v_tags, v_vals)];

    -- The step the mode takes (ledger/guard.go guardTx, issuePermit).
    IF o_mode = 'auto' THEN
        o_permit_id := p_permit_id;
        o_lease_ms := o_now + p_lease_ms;
        INSERT INTO permits (action_key, permit_id, agent, issued_ms, lease_ms) VALUES (p_key, o_permit_id, p_agent, o_now, o_lease_ms);
        v_types := v_types || ARRAY['permit_issued'];
        v_details := v_details || ARRAY['{"lease_ms":' || o_lease_ms || ',"permit_id":' || tollgate_go_json(o_permit_id) || '}'];
        v_tables := v_tables || ARRAY['permits'];
        v_hashes := v_hashes || ARRAY[tollgate_row_hash('permits', ARRAY['s', 's', 's', 'i', 'i'],
            ARRAY[p_key, o_permit_id, p_agent, o_now::text, o_lease_ms::text])];
        -- The attempt the permit is issued to, in the permit's call
        -- (ledger/attempts.go recordAttempt): its own fact row and event.
        IF p_attempt_sha256 IS NOT NULL THEN
            INSERT INTO permit_attempts (action_key, permit_id, agent, attempt_sha256, at_ms)
                VALUES (p_key, o_permit_id, p_agent, p_attempt_sha256, o_now);
            v_types := v_types || ARRAY['attempt_recorded'];
            v_details := v_details || ARRAY['{"permit_id":' || tollgate_go_json(o_permit_id) || '}'];
            v_tables := v_tables || ARRAY['permit_attempts'];
            v_hashes := v_hashes || ARRAY[tollgate_row_hash('permit_attempts', ARRAY['s', 's', 's', 's', 'i'],
                ARRAY[p_key, o_permit_id, p_agent, p_attempt_sha256, o_now::text])];
        END IF;
    ELSIF o_mode = 'approval' THEN
        o_expires_ms := o_now + o_ttl_ms;
        INSERT INTO approval_requests (action_key, agent, requested_ms, expires_ms) VALUES (p_key, p_agent, o_now, o_expires_ms);
        v_types := v_types || ARRAY['approval_requested'];
        v_details := v_details || ARRAY['{"expires_ms":' || o_expires_ms || '}'];
        v_tables := v_tables || ARRAY['approval_requests'];
        v_hashes := v_hashes || ARRAY[tollgate_row_hash('approval_requests', ARRAY['s', 's', 'i', 'i'],
            ARRAY[p_key, p_agent, o_now::text, o_expires_ms::text])];
    END IF;

    o_unsealed := tollgate_private.key_finish(p_key, CASE WHEN p_canonical IS NULL THEN '' ELSE p_target END, p_agent, o_now,
        v_types, v_details, v_tables, v_hashes);
    o_path := 'new';
END 
$function$;
REVOKE ALL ON FUNCTION tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint, text) TO tollgate_agent, tollgate_operator;

CREATE OR REPLACE FUNCTION tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint)
LANGUAGE sql SET search_path = public, pg_temp AS $function$
    SELECT g.o_path, g.o_answer, g.o_now, g.o_mode, g.o_rule, g.o_pattern, g.o_ttl_ms, g.o_approvers, g.o_permit_id, g.o_lease_ms, g.o_expires_ms, g.o_unsealed
        FROM tollgate_guard(p_key, p_sha256, p_canonical, p_kind, p_target, p_body_sha256, p_agent, p_context_sha256, p_context, p_lease_ms, p_permit_id, p_retry, p_wait_ms, NULL::text) g
$function$;
REVOKE ALL ON FUNCTION tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint) TO tollgate_agent, tollgate_operator;

-- Schema 21: the one-call guard without the checks it has already made
-- (issue 25). The triggers of schemas 11, 15 and 16 check every row the
-- generic write functions store (tollgate_insert_*, tollgate_append_*),
-- whose values are the client's; they judged tollgate_guard's rows as
-- well, though each of those values is the guard's own, computed in the
-- call from arguments it has checked: the policy was decided twice (once
-- by the guard, once again by policy_evals' trigger to check the row),
-- each event re-read and re-hashed the row it commits, and a deferred
-- trigger per row looked for the event the same call had just appended.
-- That was most of a guard's server time (about 7 ms of CPU per new key
-- against 0.04 ms for a bare insert, BenchmarkPostgresAgents).
--
-- Now tollgate_guard marks its transaction while it writes: a row keyed
-- by txid_current() in tollgate_private.guard_writing, inserted just
-- before its first write and deleted just after its last, so no
-- statement outside the call ever sees it (an error inside the call
-- rolls the insert back with the call; the delete precedes its return;
-- a later statement of the same transaction finds no row). No role but
-- the schema's owner can write the table or reach the schema, and no
-- code of an agent's or operator's runs inside the call: every function
-- it calls is the owner's, found on its pinned search_path, and every
-- trigger on the tables it writes is the owner's. The triggers below
-- skip their checks while the mark is present, by a WHEN clause, so the
-- trigger function is not even called; each skipped check and why the
-- guard already guarantees it:
--
-- * events and pending_events, tollgate_check_event (schemas 15, 16):
--   an event names a fact row of its type's table, of its key, written
--   by this transaction, with that row's hash, that no other event
--   names. The guard appends exactly one event per row it has just
--   inserted, with the fixed pairs (recorded, payloads), (policy_evaluated,
--   policy_evals), (permit_issued, permits), (approval_requested,
--   approval_requests), each row keyed by the call's key, its hash
--   computed by tollgate_row_hash from the very values it inserted (the
--   same function tollgate_fact_hash ends in; verify recomputes it from
--   the row). No other event can name these rows: each table's primary
--   key is the action key, the guard writes only when no intent of the
--   key exists under the key's lock (an archived key keeps its intent),
--   and an event can only name a row that exists. The other events the
--   call inserts are the pending ones it seals, which schema 16 already
--   lets through (tollgate_sealing).
-- * policy_evals, tollgate_check_policy_eval (schema 11): the row is
--   the output of tollgate_policy_decide, which the guard called on the
--   payload's kind, target, agent and context (the ones it stores), at
--   o_now (the database's clock, read under the locks), in the same
--   transaction and snapshot the trigger would read the rules in, under
--   the ledger-wide shared lock that keeps them from changing; the
--   trigger decided again on the same inputs, for the same answer.
-- * approval_requests, tollgate_check_approval_request (schema 11): the
--   guard writes a request only when its decision's mode is approval,
--   requested at o_now, expiring at o_now plus the decision's TTL.
-- * payloads, permits and approval_requests, tollgate_check_agent_name
--   (schema 15): the guard checks its agent's name with the same
--   function (tollgate_name_ok) and the same refusal before it writes.
-- * the deferred "committed by an event" triggers on payloads,
--   policy_evals, permits and approval_requests (schema 15): the guard
--   appends the event committing each of its rows in the same call,
--   and events are append-only (a pending event leaves its table only
--   into the chain). For a constraint trigger the WHEN clause is
--   evaluated at the insert, not at commit: a row the guard writes is
--   never queued, a row anyone else writes always is.
--
-- Kept: tollgate_check_payload_row (the guard does not itself check
-- that the text is the canonical encoding of its fields, nor the
-- fields' lengths, nor the context's canonical form) and
-- tollgate_check_permit (its epoch and approval checks, which schema 17
-- binds to the requesting role).

CREATE UNLOGGED TABLE tollgate_private.guard_writing (
    txid BIGINT PRIMARY KEY
);

-- Whether tollgate_guard is writing in this transaction: only its rows
-- are being inserted. PL/pgSQL, not SQL: a SQL function that is not
-- inlined plans its query at every call, 0.07 ms here, nine times a
-- guard; PL/pgSQL plans it once per session.
CREATE FUNCTION tollgate_guard_writing() RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM tollgate_private.guard_writing WHERE txid = txid_current_if_assigned());
END $$;
REVOKE ALL ON FUNCTION tollgate_guard_writing() FROM PUBLIC;

DROP TRIGGER events_commit_own_facts ON events;
CREATE TRIGGER events_commit_own_facts BEFORE INSERT ON events
    FOR EACH ROW WHEN (NOT tollgate_guard_writing()) EXECUTE FUNCTION tollgate_check_event();
DROP TRIGGER pending_events_commit_own_facts ON pending_events;
CREATE TRIGGER pending_events_commit_own_facts BEFORE INSERT ON pending_events
    FOR EACH ROW WHEN (NOT tollgate_guard_writing()) EXECUTE FUNCTION tollgate_check_event();
DROP TRIGGER policy_evals_follow_rules ON policy_evals;
CREATE TRIGGER policy_evals_follow_rules BEFORE INSERT ON policy_evals
    FOR EACH ROW WHEN (NOT tollgate_guard_writing()) EXECUTE FUNCTION tollgate_check_policy_eval();
DROP TRIGGER approval_requests_follow_rules ON approval_requests;
CREATE TRIGGER approval_requests_follow_rules BEFORE INSERT ON approval_requests
    FOR EACH ROW WHEN (NOT tollgate_guard_writing()) EXECUTE FUNCTION tollgate_check_approval_request();
DROP TRIGGER payloads_agent_name ON tollgate_private.payloads;
CREATE TRIGGER payloads_agent_name BEFORE INSERT ON tollgate_private.payloads
    FOR EACH ROW WHEN (NOT tollgate_guard_writing()) EXECUTE FUNCTION tollgate_check_agent_name();
DROP TRIGGER approval_requests_agent_name ON approval_requests;
CREATE TRIGGER approval_requests_agent_name BEFORE INSERT ON approval_requests
    FOR EACH ROW WHEN (NOT tollgate_guard_writing()) EXECUTE FUNCTION tollgate_check_agent_name();
DROP TRIGGER permits_agent_name ON permits;
CREATE TRIGGER permits_agent_name BEFORE INSERT ON permits
    FOR EACH ROW WHEN (NOT tollgate_guard_writing()) EXECUTE FUNCTION tollgate_check_agent_name();
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['payloads', 'policy_evals', 'permits', 'approval_requests'] LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', t || '_committed_by_an_event',
            coalesce(to_regclass('tollgate_private.' || quote_ident(t)), ('public.' || quote_ident(t))::regclass));
        EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT ON %s DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NOT tollgate_guard_writing()) EXECUTE FUNCTION tollgate_check_fact_committed()',
            t || '_committed_by_an_event',
            coalesce(to_regclass('tollgate_private.' || quote_ident(t)), ('public.' || quote_ident(t))::regclass));
    END LOOP;
END $$;

-- PL/pgSQL plans each statement for its parameters' values (a custom
-- plan) for as long as it judges that cheaper than one generic plan,
-- and for the rules' query it always did: planning was most of a
-- decision's 0.4 ms, against 0.07 ms with the generic plan, whose
-- answer is the same (every query here reads by key or scans a small
-- table). A function's setting holds for what it calls, so the guard's
-- triggers and the functions it calls plan once per session too.
ALTER FUNCTION tollgate_policy_decide(text, text, text, text, bigint) SET plan_cache_mode = force_generic_plan;

-- The guard of schema 16, marking its writes and checking its agent's
-- name itself, its statements planned once per session.
CREATE OR REPLACE FUNCTION tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text,
    p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint,
    OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text,
    OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint,
    OUT o_unsealed bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_redacted bigint := CASE WHEN p_canonical IS NULL THEN 1 ELSE 0 END;
    v_logical text;
    v_epoch text := '';
    v_active text;
    v_answer text;
    v_stage text;
    v_deadline bigint;
    v_sha text;
    v_ctx text;
    v_json jsonb;
    v_kind_sha text;
    v_target_sha text;
    v_tags text[];
    v_vals text[];
    v_types text[];
    v_details text[];
    v_tables text[];
    v_hashes text[];
    i int;
BEGIN
    -- The caller's attempt ends in p_wait_ms: a lock not had by then is
    -- given up here, with an error and nothing committed, rather than
    -- waited for by a call the client has abandoned, which would commit
    -- once the lock came free, unseen (a call is its own transaction).
    IF p_wait_ms > 0 THEN
        PERFORM set_config('lock_timeout', p_wait_ms::text, true);
    END IF;
    -- The key's grammar (ledger/keys.go ParseKey), its logical key (the
    -- lock every epoch of it shares) and its epoch.
    IF p_key IS NULL OR p_key !~ '^(hsr1:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:)?[a-z0-9-]+(:[a-z0-9-]+)*$'
        OR starts_with(p_key, 'hsr1:') AND p_key !~ '^hsr1:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:' THEN
        RAISE EXCEPTION 'tollgate_guard: the key is not an action key' USING ERRCODE = '22023';
    END IF;
    IF starts_with(p_key, 'hsr1:') THEN
        v_logical := substr(p_key, 43);
        v_epoch := substr(p_key, 6, 36);
    ELSE
        v_logical := p_key;
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
        END IF;
        IF v_stage IN ('executing', 'uncertain', 'succeeded', 'failed', 'denied') OR v_stage = 'pending' AND (v_deadline <= o_now
            OR v_epoch = coalesce((SELECT e.epoch FROM epochs e ORDER BY e.seq DESC LIMIT 1), '')) THEN
            o_path := 'index';
            o_answer := v_answer;
        END IF;
        RETURN;
    END IF;

    -- A new key. Its arguments are checked before anything is locked
    -- or written; a retry above needed only the key's.
    IF length(v_logical) > 80 OR p_sha256 IS NULL OR p_sha256 !~ '^[0-9a-f]{64}$' OR p_kind IS NULL OR p_target IS NULL
        OR p_body_sha256 IS NULL OR p_body_sha256 !~ '^[0-9a-f]{64}$' OR p_agent IS NULL OR length(p_agent) > 256
        OR p_context_sha256 IS NULL OR p_context IS NULL OR (p_context = '') <> (p_context_sha256 = '')
        OR (p_context <> '' AND encode(sha256(convert_to(p_context, 'UTF8')), 'hex') <> p_context_sha256)
        OR p_lease_ms IS NULL OR p_lease_ms NOT BETWEEN 1000 AND 604800000
        OR p_permit_id IS NULL OR p_permit_id !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
        RAISE EXCEPTION 'tollgate_guard: the arguments do not describe one guard of key %', p_key USING ERRCODE = '22023';
    END IF;
    -- The agent's name, once, as the triggers on payloads, permits and
    -- approval_requests check it (schema 15), with their refusal: they
    -- skip the guard's rows.
    IF NOT tollgate_name_ok(p_agent) THEN
        PERFORM tollgate_refuse(p_key, 'an agent name of more than 200 bytes or with a control or format character');
    END IF;
    IF p_canonical IS NOT NULL THEN
        -- The stored text is what the digest names, and it says what the
        -- row's kind, target and body digest say.
        IF encode(sha256(convert_to(p_canonical, 'UTF8')), 'hex') <> p_sha256 THEN
            RAISE EXCEPTION 'tollgate_guard: key %: the payload is not the one its digest names', p_key USING ERRCODE = '22023';
        END IF;
        -- jsonb holds no U+0000 (22P05): a payload whose text escapes
        -- one, honest or not, is left to the client's path, which stores
        -- the text as it is (a literal backslash before u0000 is sent
        -- there too: slower, never wrong).
        IF strpos(p_canonical, '\u0000') > 0 THEN
            o_path := 'full';
            RETURN;
        END IF;
        v_json := p_canonical::jsonb;
        IF jsonb_typeof(v_json) <> 'object' OR (SELECT count(*) FROM jsonb_object_keys(v_json)) <> 3
            OR jsonb_typeof(v_json -> 'body') IS DISTINCT FROM 'string' OR v_json ->> 'kind' IS DISTINCT FROM p_kind
            OR v_json ->> 'target' IS DISTINCT FROM p_target
            OR encode(sha256(convert_to(v_json ->> 'body', 'UTF8')), 'hex') <> p_body_sha256 THEN
            RAISE EXCEPTION 'tollgate_guard: key %: the payload''s fields are not the ones sent', p_key USING ERRCODE = '22023';
        END IF;
    END IF;

    -- A new key: the locks a key transaction takes (tollgate_lock_key),
    -- so that this call and the client's path exclude each other; the
    -- ledger-wide facts (rules, epochs, operators) cannot change under
    -- the shared lock. The time is read once the locks are held.
    PERFORM pg_advisory_xact_lock_shared(1953459308, 0);
    PERFORM pg_advisory_xact_lock(1953459309, hashtext(v_logical));
    o_now := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    o_path := 'full';
    -- Recorded meanwhile (or archived, or recorded by another tool):
    -- its facts decide, on the full path.
    IF EXISTS (SELECT 1 FROM intents WHERE action_key = p_key) THEN
        RETURN;
    END IF;
    -- A key outside the active epoch is fenced, and logged, by the full
    -- path; a signed ledger's rules and epochs prove themselves there.
    SELECT e.epoch INTO v_active FROM epochs e ORDER BY e.seq DESC LIMIT 1;
    IF coalesce(v_active, '') <> v_epoch OR EXISTS (SELECT 1 FROM operators) OR EXISTS (SELECT 1 FROM signatures) THEN
        RETURN;
    END IF;
    -- A rule with a condition stores what its condition read, which the
    -- client's evaluator explains.
    IF EXISTS (SELECT 1 FROM policy_rules r WHERE r.condition <> '' AND tollgate_pattern_matches(r.pattern, p_kind)) THEN
        RETURN;
    END IF;
    IF v_redacted = 1 THEN
        -- The target a rule reads is the one sent, taken only when its
        -- digest is the payload's (tollgate_action_target).
        PERFORM set_config('tollgate.target', p_target, true);
    END IF;
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern INTO o_mode, o_rule, o_ttl_ms, o_approvers, o_pattern
        FROM tollgate_policy_decide(p_kind, p_target, p_agent, p_context, o_now) d;

    -- The intent and its payload (ledger/record.go insertIntent).
    v_kind_sha := encode(sha256(convert_to(p_kind, 'UTF8')), 'hex');
    v_target_sha := encode(sha256(convert_to(p_target, 'UTF8')), 'hex');
    -- From here to the events, every row is the guard's own: the marker
    -- (schema 21) lets the schema's triggers skip the checks the lines
    -- above already made. Nothing below returns before it is removed.
    INSERT INTO tollgate_private.guard_writing VALUES (txid_current());
    INSERT INTO intents VALUES (p_key, p_sha256, 'recorded');
    INSERT INTO tollgate_private.payloads (action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256,
        agent, recorded_ms, context_sha256, context)
        VALUES (p_key, p_sha256, p_canonical, v_redacted, p_kind, v_kind_sha, v_target_sha, p_body_sha256, p_agent, o_now, p_context_sha256, p_context);
    v_tags := ARRAY['s', 's', 's', 'i', 's', 's', 's', 's', 's', 'i'];
    v_vals := ARRAY[p_key, p_sha256, p_canonical, v_redacted::text, p_kind, v_kind_sha, v_target_sha, p_body_sha256, p_agent, o_now::text];
    IF p_context_sha256 <> '' THEN
        v_tags := v_tags || ARRAY['c', 's'];
        v_vals := v_vals || ARRAY['context_sha256', p_context_sha256];
    END IF;
    IF p_context <> '' THEN
        v_tags := v_tags || ARRAY['c', 's'];
        v_vals := v_vals || ARRAY['context', p_context];
    END IF;
    v_types := ARRAY['recorded'];
    v_details := ARRAY['{"kind":' || tollgate_go_json(p_kind) || ',"payload_sha256":"' || p_sha256 || '","redacted":'
        || CASE WHEN v_redacted = 1 THEN 'true' ELSE 'false' END || '}'];
    v_tables := ARRAY['payloads'];
    v_hashes := ARRAY[tollgate_row_hash('payloads', v_tags, v_vals)];

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
    ELSIF o_mode = 'approval' THEN
        o_expires_ms := o_now + o_ttl_ms;
        INSERT INTO approval_requests (action_key, agent, requested_ms, expires_ms) VALUES (p_key, p_agent, o_now, o_expires_ms);
        v_types := v_types || ARRAY['approval_requested'];
        v_details := v_details || ARRAY['{"expires_ms":' || o_expires_ms || '}'];
        v_tables := v_tables || ARRAY['approval_requests'];
        v_hashes := v_hashes || ARRAY[tollgate_row_hash('approval_requests', ARRAY['s', 's', 'i', 'i'],
            ARRAY[p_key, p_agent, o_now::text, o_expires_ms::text])];
    END IF;

    -- The projection, then the events. The head is taken only if it is
    -- free (SKIP LOCKED never waits): then the events are appended as
    -- before, after what is pending (tollgate_append_events seals
    -- first), the head held for this statement and the commit; else they
    -- are committed pending, under the key's lock alone, and o_unsealed
    -- is the last one's id, which the client seals after the commit
    -- (tollgate_seal). In a snapshot taken before this call's locks (a
    -- transaction of REPEATABLE READ or SERIALIZABLE) the rules and
    -- epochs read above may predate a change the locks waited for: there
    -- the head is waited for, as before schema 16, and a head that moved
    -- since the snapshot refuses the call (40001,
    -- TestPostgresGuardAttackStaleSnapshot). In READ COMMITTED each
    -- statement read what was committed once the locks were held.
    PERFORM tollgate_refresh_index(p_key, CASE WHEN v_redacted = 1 THEN '' ELSE p_target END);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    ELSE
        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE SKIP LOCKED;
    END IF;
    IF FOUND THEN
        PERFORM tollgate_append_events(
            array_fill(p_key, ARRAY[cardinality(v_types)]), v_types, array_fill(p_agent, ARRAY[cardinality(v_types)]), v_details,
            array_fill(o_now, ARRAY[cardinality(v_types)]), v_tables, array_fill(p_key, ARRAY[cardinality(v_types)]), v_hashes);
    ELSE
        FOR i IN 1 .. cardinality(v_types) LOOP
            INSERT INTO pending_events (action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256)
                VALUES (p_key, v_types[i], p_agent, v_details[i], o_now, v_tables[i], p_key, v_hashes[i]) RETURNING id INTO o_unsealed;
        END LOOP;
    END IF;
    -- The marker goes before the call returns: a later statement of the
    -- caller's transaction, and whatever an error rolls back to, never
    -- sees it.
    DELETE FROM tollgate_private.guard_writing WHERE txid = txid_current();
    o_path := 'new';
END $$;

REVOKE ALL ON FUNCTION tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint) TO tollgate_agent, tollgate_operator;

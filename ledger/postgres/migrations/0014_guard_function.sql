-- A guard in one round trip (issue 25). Until now a guard of a new key on
-- PostgreSQL sent fifteen statements: BEGIN, the key's lock, the reads of
-- its facts, the rules and the trust, each fact's insert, the projection,
-- the chain and COMMIT, each a round trip, each the key's lock held
-- across it. tollgate_guard does the common guard whole, inside the
-- database, in the one transaction of its autocommit call: an identical
-- retry that needs no new step is answered from the projection, as the
-- client's fast path answered it; a new key on an unsigned ledger whose
-- rules for its kind have no condition is recorded, evaluated by the
-- database's own evaluator (schema 11), and permitted, sent for approval
-- or denied, its events appended and its projection refreshed. Every
-- other case (a conflict, a fence, a key that needs its facts read, a
-- signed ledger, a condition whose explanation the client writes) comes
-- back as o_path 'full' with nothing written, and the client runs the
-- full path. The rows it writes are the rows the client's path writes,
-- hashed alike (tollgate_row_hash is ledger/facts.go's rowHash, and
-- tollgate_go_json the JSON encoding of the events' details), so verify,
-- export and the witness prove them as they prove the others; the
-- schema's triggers judge them as they judge any insert.

-- A string as Go's encoding/json writes it: PostgreSQL's to_json escapes
-- alike but for the HTML characters and the two line separators, which
-- Go writes as \u escapes.
CREATE FUNCTION tollgate_go_json(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog AS $$
BEGIN
    RETURN replace(replace(replace(replace(replace(to_json(p)::text,
        '<', '\u003c'), '>', '\u003e'), '&', '\u0026'), U&'\2028', '\u2028'), U&'\2029', '\u2029');
END $$;

-- A fact row's SHA-256 (ledger/facts.go rowHash): the table's name and
-- each value, each written as its type tag, its length in bytes, a colon
-- and its text; a NULL is tagged n whatever its column's tag. The caller
-- leaves out an optional column at its default and names a tagged one
-- ('c' and its name) before its value, as rowHash does.
CREATE FUNCTION tollgate_row_hash(p_table text, p_tags text[], p_vals text[]) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog AS $$
DECLARE
    v_all bytea := convert_to('t' || octet_length(convert_to(p_table, 'UTF8'))::text || ':', 'UTF8') || convert_to(p_table, 'UTF8');
    v_bytes bytea;
    i int;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_tags), 0) LOOP
        v_bytes := convert_to(coalesce(p_vals[i], ''), 'UTF8');
        v_all := v_all || convert_to(CASE WHEN p_vals[i] IS NULL THEN 'n' ELSE p_tags[i] END || octet_length(v_bytes)::text || ':', 'UTF8') || v_bytes;
    END LOOP;
    RETURN encode(sha256(v_all), 'hex');
END $$;

-- The guard. The client sends what it sends today: the key, the
-- payload's digest and canonical text (NULL when redacted), its kind,
-- target and body digest, the agent's name, the context, the lease it
-- asks for and a permit id it generated. The time is the database's,
-- the decision the rules', and every argument that a row or a decision
-- takes is checked against the others where they can be: the canonical
-- text against its digest and its fields, the context against its
-- digest, the lease against tollgate's bounds (1 s to 7 days). p_retry
-- says that an earlier attempt of this call may have committed; p_wait_ms
-- bounds its lock waits (0: none).
CREATE FUNCTION tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text,
    p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint,
    OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text,
    OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
    v_seq bigint;
    v_hash text;
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

    -- The projection, then the chain: the head is locked by the append,
    -- the last statement before the commit, as in the client's key
    -- transactions.
    PERFORM tollgate_refresh_index(p_key, CASE WHEN v_redacted = 1 THEN '' ELSE p_target END);
    -- lock_timeout bounds each wait on its own: the head's wait gets what
    -- is left of the attempt since the client's statement began, not the
    -- whole of it again, or the database would answer after the client
    -- gave up (TestPostgresLockWaitIsBoundedPerAttempt, under load).
    IF p_wait_ms > 0 THEN
        v_seq := p_wait_ms - (extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::bigint;
        IF v_seq < 1 THEN
            RAISE EXCEPTION 'tollgate_guard: key %: the attempt''s time ran out before the chain head', p_key USING ERRCODE = '55P03';
        END IF;
        PERFORM set_config('lock_timeout', v_seq::text, true);
    END IF;
    SELECT a.o_seq, a.o_hash INTO v_seq, v_hash FROM tollgate_append_events(
        array_fill(p_key, ARRAY[cardinality(v_types)]), v_types, array_fill(p_agent, ARRAY[cardinality(v_types)]), v_details,
        array_fill(o_now, ARRAY[cardinality(v_types)]), v_tables, array_fill(p_key, ARRAY[cardinality(v_types)]), v_hashes) a;
    o_path := 'new';
END $$;

REVOKE ALL ON FUNCTION tollgate_go_json(text), tollgate_row_hash(text, text[], text[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint) TO tollgate_agent, tollgate_operator;

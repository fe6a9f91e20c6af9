-- Schema 24: record in one call (issue 25). A record (an intent with no
-- permit request) took a key transaction of its own on PostgreSQL: a
-- lookup, BEGIN, the key's lock, a read, the fence check, the intent,
-- its payload, the projection, the event and COMMIT, the key's lock held
-- across every round trip. A record is a guard's first half: what
-- tollgate_guard (schema 21) does for a new key before it applies the
-- rules, and what it does after (the projection and the events). Those
-- parts move, unchanged, into three private functions that
-- tollgate_guard and the new tollgate_record both call:
--
-- * tollgate_private.key_parse: the attempt's lock bound, the key's
--   grammar, its logical key and its epoch;
-- * tollgate_private.key_new: the new key's arguments checked, the locks
--   a key transaction takes (the ledger-wide gate of schema 23 shared,
--   the key's own), and whether the key is one this call may write:
--   not recorded meanwhile, of the active epoch, on a ledger no operator
--   signs; false leaves the call to the client's path;
-- * tollgate_private.record_write: the intent and its payload, under the
--   guard's mark (schema 21), and the "recorded" event's fields;
-- * tollgate_private.key_finish: the projection, the events appended (or
--   committed pending when the chain head is taken) and the mark
--   removed.
--
-- They live in tollgate_private, which no role but the owner may use,
-- with EXECUTE taken from PUBLIC: only the owner's functions call them.
-- tollgate_record answers 'new' when it recorded the key, and 'full'
-- (having written nothing) for everything else, which the client's path
-- then does: a key already recorded (a replay or a conflict), a key of
-- another epoch (fenced and logged there), a signed ledger, a payload
-- holding U+0000.

CREATE FUNCTION tollgate_private.key_parse(p_fn text, p_key text, p_wait_ms bigint, OUT o_logical text, OUT o_epoch text)
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
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
        RAISE EXCEPTION '%: the key is not an action key', p_fn USING ERRCODE = '22023';
    END IF;
    o_epoch := '';
    IF starts_with(p_key, 'hsr1:') THEN
        o_logical := substr(p_key, 43);
        o_epoch := substr(p_key, 6, 36);
    ELSE
        o_logical := p_key;
    END IF;
END $$;

CREATE FUNCTION tollgate_private.key_new(p_fn text, p_key text, p_logical text, p_epoch text, p_sha256 text, p_canonical text,
    p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, OUT o_now bigint, OUT o_go boolean)
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
    v_json jsonb;
    v_active text;
BEGIN
    o_go := false;
    o_now := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    -- A new key. Its arguments are checked before anything is locked
    -- or written.
    IF length(p_logical) > 80 OR p_sha256 IS NULL OR p_sha256 !~ '^[0-9a-f]{64}$' OR p_kind IS NULL OR p_target IS NULL
        OR p_body_sha256 IS NULL OR p_body_sha256 !~ '^[0-9a-f]{64}$' OR p_agent IS NULL OR length(p_agent) > 256
        OR p_context_sha256 IS NULL OR p_context IS NULL OR (p_context = '') <> (p_context_sha256 = '')
        OR (p_context <> '' AND encode(sha256(convert_to(p_context, 'UTF8')), 'hex') <> p_context_sha256) THEN
        RAISE EXCEPTION '%: the arguments do not describe one call of key %', p_fn, p_key USING ERRCODE = '22023';
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
            RAISE EXCEPTION '%: key %: the payload is not the one its digest names', p_fn, p_key USING ERRCODE = '22023';
        END IF;
        -- jsonb holds no U+0000 (22P05): a payload whose text escapes
        -- one, honest or not, is left to the client's path, which stores
        -- the text as it is (a literal backslash before u0000 is sent
        -- there too: slower, never wrong).
        IF strpos(p_canonical, '\u0000') > 0 THEN
            RETURN;
        END IF;
        v_json := p_canonical::jsonb;
        IF jsonb_typeof(v_json) <> 'object' OR (SELECT count(*) FROM jsonb_object_keys(v_json)) <> 3
            OR jsonb_typeof(v_json -> 'body') IS DISTINCT FROM 'string' OR v_json ->> 'kind' IS DISTINCT FROM p_kind
            OR v_json ->> 'target' IS DISTINCT FROM p_target
            OR encode(sha256(convert_to(v_json ->> 'body', 'UTF8')), 'hex') <> p_body_sha256 THEN
            RAISE EXCEPTION '%: key %: the payload''s fields are not the ones sent', p_fn, p_key USING ERRCODE = '22023';
        END IF;
    END IF;

    -- The locks a key transaction takes (tollgate_lock_key), so that
    -- this call and the client's path exclude each other; the
    -- ledger-wide facts (rules, epochs, operators) cannot change under
    -- the shared gate (schema 23). The time is read once the locks are
    -- held.
    LOCK TABLE tollgate_private.ledger_gate IN ROW SHARE MODE;
    PERFORM pg_advisory_xact_lock(1953459309, hashtext(p_logical));
    o_now := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    -- Recorded meanwhile (or archived, or recorded by another tool):
    -- its facts decide, on the full path.
    IF EXISTS (SELECT 1 FROM intents WHERE action_key = p_key) THEN
        RETURN;
    END IF;
    -- A key outside the active epoch is fenced, and logged, by the full
    -- path; a signed ledger's rules and epochs prove themselves there.
    SELECT e.epoch INTO v_active FROM epochs e ORDER BY e.seq DESC LIMIT 1;
    IF coalesce(v_active, '') <> p_epoch OR EXISTS (SELECT 1 FROM operators) OR EXISTS (SELECT 1 FROM signatures) THEN
        RETURN;
    END IF;
    o_go := true;
END $$;

CREATE FUNCTION tollgate_private.record_write(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text,
    p_agent text, p_context_sha256 text, p_context text, p_now bigint,
    OUT o_types text[], OUT o_details text[], OUT o_tables text[], OUT o_hashes text[])
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
    v_redacted bigint := CASE WHEN p_canonical IS NULL THEN 1 ELSE 0 END;
    v_kind_sha text := encode(sha256(convert_to(p_kind, 'UTF8')), 'hex');
    v_target_sha text := encode(sha256(convert_to(p_target, 'UTF8')), 'hex');
    v_tags text[];
    v_vals text[];
BEGIN
    -- From here to the events, every row is the caller's own: the marker
    -- (schema 21) lets the schema's triggers skip the checks key_new and
    -- the caller already made. key_finish removes it; an error rolls it
    -- back with the call.
    INSERT INTO tollgate_private.guard_writing VALUES (txid_current());
    -- The intent and its payload (ledger/record.go insertIntent).
    INSERT INTO intents VALUES (p_key, p_sha256, 'recorded');
    INSERT INTO tollgate_private.payloads (action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256,
        agent, recorded_ms, context_sha256, context)
        VALUES (p_key, p_sha256, p_canonical, v_redacted, p_kind, v_kind_sha, v_target_sha, p_body_sha256, p_agent, p_now, p_context_sha256, p_context);
    v_tags := ARRAY['s', 's', 's', 'i', 's', 's', 's', 's', 's', 'i'];
    v_vals := ARRAY[p_key, p_sha256, p_canonical, v_redacted::text, p_kind, v_kind_sha, v_target_sha, p_body_sha256, p_agent, p_now::text];
    IF p_context_sha256 <> '' THEN
        v_tags := v_tags || ARRAY['c', 's'];
        v_vals := v_vals || ARRAY['context_sha256', p_context_sha256];
    END IF;
    IF p_context <> '' THEN
        v_tags := v_tags || ARRAY['c', 's'];
        v_vals := v_vals || ARRAY['context', p_context];
    END IF;
    o_types := ARRAY['recorded'];
    o_details := ARRAY['{"kind":' || tollgate_go_json(p_kind) || ',"payload_sha256":"' || p_sha256 || '","redacted":'
        || CASE WHEN v_redacted = 1 THEN 'true' ELSE 'false' END || '}'];
    o_tables := ARRAY['payloads'];
    o_hashes := ARRAY[tollgate_row_hash('payloads', v_tags, v_vals)];
END $$;

CREATE FUNCTION tollgate_private.key_finish(p_key text, p_target text, p_agent text, p_now bigint,
    p_types text[], p_details text[], p_tables text[], p_hashes text[]) RETURNS bigint
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
    v_unsealed bigint;
    i int;
BEGIN
    -- The projection, then the events. The head is taken only if it is
    -- free (SKIP LOCKED never waits): then the events are appended as
    -- before, after what is pending (tollgate_append_events seals
    -- first), the head held for this statement and the commit; else they
    -- are committed pending, under the key's lock alone, and the last
    -- one's id is returned, which the client seals after the commit
    -- (tollgate_seal). In a snapshot taken before this call's locks (a
    -- transaction of REPEATABLE READ or SERIALIZABLE) the rules and
    -- epochs read above may predate a change the locks waited for: there
    -- the head is waited for, as before schema 16, and a head that moved
    -- since the snapshot refuses the call (40001,
    -- TestPostgresGuardAttackStaleSnapshot). In READ COMMITTED each
    -- statement read what was committed once the locks were held.
    PERFORM tollgate_refresh_index(p_key, p_target);
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    ELSE
        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE SKIP LOCKED;
    END IF;
    IF FOUND THEN
        PERFORM tollgate_append_events(
            array_fill(p_key, ARRAY[cardinality(p_types)]), p_types, array_fill(p_agent, ARRAY[cardinality(p_types)]), p_details,
            array_fill(p_now, ARRAY[cardinality(p_types)]), p_tables, array_fill(p_key, ARRAY[cardinality(p_types)]), p_hashes);
    ELSE
        FOR i IN 1 .. cardinality(p_types) LOOP
            INSERT INTO pending_events (action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256)
                VALUES (p_key, p_types[i], p_agent, p_details[i], p_now, p_tables[i], p_key, p_hashes[i]) RETURNING id INTO v_unsealed;
        END LOOP;
    END IF;
    -- The marker goes before the call returns: a later statement of the
    -- caller's transaction, and whatever an error rolls back to, never
    -- sees it.
    DELETE FROM tollgate_private.guard_writing WHERE txid = txid_current();
    RETURN v_unsealed;
END $$;

REVOKE ALL ON FUNCTION tollgate_private.key_parse(text, text, bigint),
    tollgate_private.key_new(text, text, text, text, text, text, text, text, text, text, text, text),
    tollgate_private.record_write(text, text, text, text, text, text, text, text, text, bigint),
    tollgate_private.key_finish(text, text, text, bigint, text[], text[], text[], text[]) FROM PUBLIC;

-- The guard of schema 21 (with schema 23's gate), its shared parts
-- called rather than written out.
CREATE OR REPLACE FUNCTION tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text,
    p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint,
    OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text,
    OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint,
    OUT o_unsealed bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
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
END $$;

-- A record of a new key in one call: the guard's first half and its end.
-- o_path is 'new' when it recorded the key (o_unsealed as the guard's),
-- 'full' when it wrote nothing and the client's path decides.
CREATE FUNCTION tollgate_record(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text,
    p_agent text, p_context_sha256 text, p_context text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_logical text;
    v_epoch text;
    v_go boolean;
    v_types text[];
    v_details text[];
    v_tables text[];
    v_hashes text[];
BEGIN
    SELECT k.o_logical, k.o_epoch INTO v_logical, v_epoch FROM tollgate_private.key_parse('tollgate_record', p_key, p_wait_ms) k;
    SELECT k.o_now, k.o_go INTO o_now, v_go FROM tollgate_private.key_new('tollgate_record', p_key, v_logical, v_epoch, p_sha256, p_canonical,
        p_kind, p_target, p_body_sha256, p_agent, p_context_sha256, p_context) k;
    o_path := 'full';
    IF NOT v_go THEN
        RETURN;
    END IF;
    SELECT w.o_types, w.o_details, w.o_tables, w.o_hashes INTO v_types, v_details, v_tables, v_hashes
        FROM tollgate_private.record_write(p_key, p_sha256, p_canonical, p_kind, p_target, p_body_sha256, p_agent, p_context_sha256, p_context, o_now) w;
    o_unsealed := tollgate_private.key_finish(p_key, CASE WHEN p_canonical IS NULL THEN '' ELSE p_target END, p_agent, o_now,
        v_types, v_details, v_tables, v_hashes);
    o_path := 'new';
END $$;

REVOKE ALL ON FUNCTION tollgate_record(text, text, text, text, text, text, text, text, text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_record(text, text, text, text, text, text, text, text, text, bigint) TO tollgate_agent, tollgate_operator;

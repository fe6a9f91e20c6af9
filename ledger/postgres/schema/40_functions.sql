-- tollgate's PostgreSQL ledger: its functions. Agents and operators write
-- only through them (SECURITY DEFINER, each with its search_path pinned):
-- tollgate_guard, tollgate_record, tollgate_report and the decisions'
-- functions do a whole call in one round trip; the insert functions keep
-- the fact tables' lists; tollgate_append_event and tollgate_flush number,
-- link and hash the events; the trigger functions (tollgate_check_*,
-- tollgate_refuse_*) check every row a role stores. The comment above each
-- is the one its last change carried, which says why it is so.
-- Objects (pgschema-fold.py writes what follows, up to the rows):

-- The body a rule reads: the stored payload's, none when redacted.
CREATE FUNCTION public.tollgate_action_body(p_canonical text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    AS $$
BEGIN
    IF p_canonical IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN p_canonical::jsonb ->> 'body';
EXCEPTION WHEN OTHERS THEN
    RETURN NULL;
END $$;

-- The target a rule reads: the stored payload's, or for a redacted
-- payload the one the guard's transaction named (set_config
-- 'tollgate.target') when its SHA-256 is the payload's target digest;
-- NULL when neither is known.
CREATE FUNCTION public.tollgate_action_target(p_canonical text, p_target_sha256 text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v text;
BEGIN
    IF p_canonical IS NOT NULL THEN
        BEGIN
            RETURN p_canonical::jsonb ->> 'target';
        EXCEPTION WHEN OTHERS THEN
            RETURN NULL;
        END;
    END IF;
    v := current_setting('tollgate.target', true);
    IF v IS NOT NULL AND encode(sha256(convert_to(v, 'UTF8')), 'hex') = p_target_sha256 THEN
        RETURN v;
    END IF;
    RETURN NULL;
END $$;

-- The operator's side. A role that does not exist is refused by name
-- (22023), and so is an agent name the ledger would refuse anyway
-- (tollgate_name_ok, schema 15): allowing it would allow nothing.
CREATE FUNCTION public.tollgate_agent_allow(p_role text, p_agent text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_n bigint;
BEGIN
    IF p_role IS NULL OR NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = p_role) THEN
        RAISE EXCEPTION 'there is no role %', coalesce(p_role, 'NULL') USING ERRCODE = '22023';
    END IF;
    IF p_agent IS NULL OR p_agent = '' OR NOT tollgate_name_ok(p_agent) THEN
        RAISE EXCEPTION 'an agent name is 1 to 200 bytes with no control or format character' USING ERRCODE = '22023';
    END IF;
    INSERT INTO tollgate_private.agent_names (role, agent) VALUES (p_role, p_agent) ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n > 0;
END $$;

CREATE FUNCTION public.tollgate_agent_names() RETURNS TABLE(role text, agent text, added_by text, added_ms bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    SELECT a.role, a.agent, a.added_by, a.added_ms FROM tollgate_private.agent_names a ORDER BY a.role, a.agent
$$;

-- Whether the session is an agent's role only (not an operator's, not
-- the schema's owner): what it appends is a key transaction's events.
CREATE FUNCTION public.tollgate_agent_only() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    SELECT NOT pg_has_role(session_user, 'tollgate_operator', 'USAGE')
        AND NOT pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'USAGE')
$$;

CREATE FUNCTION public.tollgate_agent_revoke(p_role text, p_agent text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_n bigint;
BEGIN
    DELETE FROM tollgate_private.agent_names WHERE role = p_role AND agent = p_agent;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n > 0;
END $$;

-- Changed in place since by development schema 39: no agent's role ever
-- locks the chain head (issue 41). (that migration, in the history,
-- says more).
CREATE FUNCTION public.tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint, p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_prev text;
BEGIN
    IF tollgate_private.agent_pends() THEN
        INSERT INTO pending_events (action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256)
            VALUES (p_key, p_type, p_actor, p_detail, p_at, p_fact_table, p_fact_row, p_fact_sha256);
        RETURN;
    END IF;
    PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    PERFORM tollgate_private.seal_pending();
    SELECT h.seq + 1, h.hash INTO o_seq, v_prev FROM chain_head h WHERE h.one = 1;
    o_hash := tollgate_event_hash(v_prev, o_seq, p_key, p_type, p_actor, p_detail, p_at, p_fact_table, p_fact_row, p_fact_sha256);
    INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv)
        VALUES (o_seq, p_key, p_type, p_actor, p_detail, p_at, v_prev, o_hash, p_fact_table, p_fact_row, p_fact_sha256, 2);
    UPDATE chain_head SET seq = o_seq, hash = o_hash WHERE one = 1;
END $$;

-- Changed in place since by development schema 39: no agent's role ever
-- locks the chain head (issue 41). (that migration, in the history,
-- says more).
CREATE FUNCTION public.tollgate_append_events(p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], OUT o_seq bigint, OUT o_hash text) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
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
    IF tollgate_private.agent_pends() THEN
        INSERT INTO pending_events (action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256)
            SELECT k, t, a, d, at, ft, fr, fs FROM unnest(p_keys, p_types, p_actors, p_details, p_ats, p_fact_tables, p_fact_rows, p_fact_sha256s) WITH ORDINALITY AS e(k, t, a, d, at, ft, fr, fs, n) ORDER BY n;
        RETURN;
    END IF;
    PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    PERFORM tollgate_private.seal_pending();
    SELECT h.seq, h.hash INTO o_seq, o_hash FROM chain_head h WHERE h.one = 1;
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

-- Evidence is append-only for everyone, the owner included: a row
-- trigger refuses UPDATE and DELETE, and a statement trigger refuses
-- TRUNCATE and any UPDATE or DELETE even where no row matches, with
-- SQLSTATE TG001, which the engine maps to ErrAppendOnly.
CREATE FUNCTION public.tollgate_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'TG001';
END $$;

-- The action a condition reads: kind, target (NULL when the database
-- cannot know it), agent, and the body when it is one JSON object, with
-- body_err when one of its numbers cannot be read (an integral number
-- beyond int64, a double out of range), which every read of the body
-- then returns, as approvals.ParseBody does.
CREATE FUNCTION public.tollgate_cel_action(p_kind text, p_target text, p_agent text, p_body text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
DECLARE
    v_act jsonb := jsonb_build_object('kind', p_kind, 'target', p_target, 'agent', p_agent);
    v_body jsonb;
    v_num jsonb;
    v_n numeric;
BEGIN
    IF p_body IS NULL OR ltrim(p_body, E' \t\r\n') NOT LIKE '{%' THEN
        RETURN v_act;
    END IF;
    BEGIN
        v_body := p_body::jsonb;
    EXCEPTION WHEN OTHERS THEN
        RETURN v_act; -- not JSON that jsonb reads (an escaped U+0000, a lone surrogate): no body
    END;
    IF jsonb_typeof(v_body) <> 'object' THEN
        RETURN v_act;
    END IF;
    v_act := v_act || jsonb_build_object('body', v_body);
    FOR v_num IN SELECT x FROM jsonb_path_query(v_body, 'strict $.**') x WHERE jsonb_typeof(x) = 'number' LOOP
        v_n := (v_num #>> '{}')::numeric;
        IF scale(v_n) = 0 THEN
            IF v_n < -9223372036854775808 OR v_n > 9223372036854775807 THEN
                RETURN v_act || jsonb_build_object('body_err', 'an integral number in the body is beyond int64');
            END IF;
        ELSE
            BEGIN
                PERFORM (v_num #>> '{}')::float8;
            EXCEPTION WHEN OTHERS THEN
                RETURN v_act || jsonb_build_object('body_err', 'a number in the body is out of range for a double');
            END;
        END IF;
    END LOOP;
    RETURN v_act;
END $_$;

CREATE FUNCTION public.tollgate_cel_arith(op text, a jsonb, b jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    ta text := a ->> 0;
    tb text := b ->> 0;
    x bigint;
    y bigint;
    u float8;
    v float8;
BEGIN
    IF ta = 'e' THEN RETURN a; END IF;
    IF tb = 'e' THEN RETURN b; END IF;
    IF ta = 'i' AND tb = 'i' THEN
        x := (a ->> 1)::bigint;
        y := (b ->> 1)::bigint;
        BEGIN
            CASE op
            WHEN '_+_' THEN RETURN jsonb_build_array('i', x + y);
            WHEN '_-_' THEN RETURN jsonb_build_array('i', x - y);
            WHEN '_*_' THEN RETURN jsonb_build_array('i', x * y);
            WHEN '_/_' THEN
                IF y = 0 THEN RETURN tollgate_cel_err('division by zero'); END IF;
                RETURN jsonb_build_array('i', x / y);
            WHEN '_%_' THEN
                IF y = 0 THEN RETURN tollgate_cel_err('modulus by zero'); END IF;
                IF y = -1 THEN RETURN jsonb_build_array('i', 0); END IF;
                RETURN jsonb_build_array('i', x % y);
            END CASE;
        EXCEPTION WHEN numeric_value_out_of_range THEN
            RETURN tollgate_cel_err('integer overflow');
        END;
    ELSIF ta = 'd' AND tb = 'd' AND op <> '_%_' THEN
        u := tollgate_cel_f8(a);
        v := tollgate_cel_f8(b);
        BEGIN
            CASE op
            WHEN '_+_' THEN RETURN tollgate_cel_d(u + v);
            WHEN '_-_' THEN RETURN tollgate_cel_d(u - v);
            WHEN '_*_' THEN RETURN tollgate_cel_d(u * v);
            WHEN '_/_' THEN
                IF v = 0 THEN
                    RETURN tollgate_cel_d(CASE WHEN u = 0 OR u = 'NaN'::float8 THEN 'NaN'::float8 WHEN u > 0 THEN 'Infinity'::float8 ELSE '-Infinity'::float8 END);
                END IF;
                RETURN tollgate_cel_d(u / v);
            END CASE;
        EXCEPTION WHEN numeric_value_out_of_range THEN
            RETURN tollgate_cel_err('double out of range');
        END;
    ELSIF ta = 's' AND tb = 's' AND op = '_+_' THEN
        RETURN jsonb_build_array('s', (a ->> 1) || (b ->> 1));
    ELSIF ta = 'l' AND tb = 'l' AND op = '_+_' THEN
        RETURN jsonb_build_array('l', (a -> 1) || (b -> 1));
    END IF;
    RETURN tollgate_cel_err('no such overload: ' || op || ' of ' || ta || ' and ' || tb);
END $$;

-- A value of a body (already checked by tollgate_cel_action) as a CEL
-- value: an object is a map ["m", object].
CREATE FUNCTION public.tollgate_cel_body_of(p jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    items jsonb := '[]'::jsonb;
    i int;
BEGIN
    CASE jsonb_typeof(p)
    WHEN 'string' THEN RETURN jsonb_build_array('s', p);
    WHEN 'boolean' THEN RETURN jsonb_build_array('b', p);
    WHEN 'number' THEN
        IF scale((p #>> '{}')::numeric) = 0 THEN
            RETURN jsonb_build_array('i', p);
        END IF;
        RETURN jsonb_build_array('d', p);
    WHEN 'array' THEN
        FOR i IN 0 .. jsonb_array_length(p) - 1 LOOP
            items := items || jsonb_build_array(tollgate_cel_body_of(p -> i));
        END LOOP;
        RETURN jsonb_build_array('l', items);
    WHEN 'object' THEN RETURN jsonb_build_array('m', p);
    ELSE RETURN jsonb_build_array('n');
    END CASE;
END $$;

-- A path into the body (["body", "a", "b"] or ["hasbody", ...]) as CEL
-- reads it: every step but a has()'s last must exist.
CREATE FUNCTION public.tollgate_cel_body_path(n jsonb, act jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    v jsonb;
    i int;
    last int := jsonb_array_length(n) - 1;
    f text;
BEGIN
    IF act ? 'body_err' THEN RETURN tollgate_cel_err(act ->> 'body_err'); END IF;
    IF NOT act ? 'body' THEN RETURN tollgate_cel_err('no such key: body'); END IF;
    v := act -> 'body';
    FOR i IN 1 .. last LOOP
        f := n ->> i;
        IF i = last AND n ->> 0 = 'hasbody' THEN
            -- cel-go: has() of a field of a scalar is false, of a list an error.
            CASE jsonb_typeof(v)
            WHEN 'object' THEN RETURN jsonb_build_array('b', v ? f);
            WHEN 'array' THEN RETURN tollgate_cel_err('no such key: ' || f);
            ELSE RETURN jsonb_build_array('b', false);
            END CASE;
        END IF;
        IF jsonb_typeof(v) <> 'object' THEN
            RETURN tollgate_cel_err('no such overload: a field of a value that is not a map');
        END IF;
        IF NOT v ? f THEN RETURN tollgate_cel_err('no such key: ' || f); END IF;
        v := v -> f;
    END LOOP;
    RETURN tollgate_cel_body_of(v);
END $$;

-- Ordering: -1, 0 or 1 as ["i", n], or an error for types CEL does not
-- order against each other.
CREATE FUNCTION public.tollgate_cel_cmp(a jsonb, b jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    ta text := a ->> 0;
    tb text := b ->> 0;
    x float8;
    y float8;
BEGIN
    IF ta = 'e' THEN RETURN a; END IF;
    IF tb = 'e' THEN RETURN b; END IF;
    IF ta = 'i' AND tb = 'i' THEN
        RETURN jsonb_build_array('i', sign((a ->> 1)::numeric - (b ->> 1)::numeric)::int);
    ELSIF ta IN ('i', 'd') AND tb IN ('i', 'd') THEN
        x := tollgate_cel_f8(a);
        y := tollgate_cel_f8(b);
        IF x = 'NaN'::float8 OR y = 'NaN'::float8 THEN
            RETURN tollgate_cel_err('NaN values cannot be ordered');
        END IF;
        RETURN jsonb_build_array('i', CASE WHEN x < y THEN -1 WHEN x > y THEN 1 ELSE 0 END);
    ELSIF ta = 's' AND tb = 's' THEN
        RETURN jsonb_build_array('i', CASE WHEN (a ->> 1) COLLATE "C" < (b ->> 1) COLLATE "C" THEN -1 WHEN (a ->> 1) = (b ->> 1) THEN 0 ELSE 1 END);
    ELSIF ta = 'b' AND tb = 'b' THEN
        RETURN jsonb_build_array('i', CASE WHEN (a ->> 1)::bool = (b ->> 1)::bool THEN 0 WHEN (a ->> 1)::bool THEN 1 ELSE -1 END);
    ELSIF ta = 't' AND tb = 't' THEN
        RETURN jsonb_build_array('i', sign((a ->> 1)::numeric - (b ->> 1)::numeric)::int);
    END IF;
    RETURN tollgate_cel_err('no such overload: ordering of ' || ta || ' and ' || tb);
END $$;

-- A context (canonical JSON) with each field as a value, converted once
-- for every condition of a decision.
CREATE FUNCTION public.tollgate_cel_context(ctx jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    out jsonb := '{}'::jsonb;
    k text;
    v jsonb;
BEGIN
    FOR k, v IN SELECT * FROM jsonb_each(ctx) LOOP
        out := out || jsonb_build_object(k, tollgate_cel_of(v));
    END LOOP;
    RETURN out;
END $$;

-- A double as a value; PostgreSQL raises where IEEE arithmetic gives an
-- infinity, which the caller turns into CEL's infinity or NaN.
CREATE FUNCTION public.tollgate_cel_d(x double precision) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT jsonb_build_array('d', to_jsonb(x)) $$;

-- Equality: a map from the body equals another by value.
CREATE FUNCTION public.tollgate_cel_eq(a jsonb, b jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    ta text := a ->> 0;
    tb text := b ->> 0;
    r jsonb;
    i int;
BEGIN
    IF ta = 'e' THEN RETURN a; END IF;
    IF tb = 'e' THEN RETURN b; END IF;
    IF ta IN ('i', 'd') AND tb IN ('i', 'd') THEN
        IF ta = 'i' AND tb = 'i' THEN
            RETURN jsonb_build_array('b', (a ->> 1)::numeric = (b ->> 1)::numeric);
        END IF;
        IF tollgate_cel_f8(a) = 'NaN'::float8 OR tollgate_cel_f8(b) = 'NaN'::float8 THEN
            RETURN jsonb_build_array('b', false);
        END IF;
        RETURN jsonb_build_array('b', tollgate_cel_f8(a) = tollgate_cel_f8(b));
    END IF;
    IF ta IS DISTINCT FROM tb THEN
        RETURN jsonb_build_array('b', false);
    END IF;
    CASE ta
    WHEN 's' THEN RETURN jsonb_build_array('b', (a ->> 1) = (b ->> 1));
    WHEN 'b' THEN RETURN jsonb_build_array('b', (a -> 1) = (b -> 1));
    WHEN 'n' THEN RETURN jsonb_build_array('b', true);
    WHEN 't' THEN RETURN jsonb_build_array('b', (a ->> 1)::numeric = (b ->> 1)::numeric);
    WHEN 'm' THEN RETURN jsonb_build_array('b', (a -> 1) = (b -> 1));
    WHEN 'l' THEN
        IF jsonb_array_length(a -> 1) <> jsonb_array_length(b -> 1) THEN
            RETURN jsonb_build_array('b', false);
        END IF;
        FOR i IN 0 .. jsonb_array_length(a -> 1) - 1 LOOP
            r := tollgate_cel_eq(a -> 1 -> i, b -> 1 -> i);
            IF r ->> 0 = 'e' OR r -> 1 = 'false'::jsonb THEN
                RETURN r;
            END IF;
        END LOOP;
        RETURN jsonb_build_array('b', true);
    ELSE RETURN tollgate_cel_err('no such overload: equality of ' || ta);
    END CASE;
END $$;

-- The evaluator. Its functions are pure and run as their caller, so
-- they take the caller's search_path (the owner's pinned one, from the
-- triggers) rather than setting their own: a function that sets it is
-- never inlined, and a path that changes at each nested call makes
-- PL/pgSQL re-plan its statements, which cost a condition ten times
-- its work. A value is a JSON array tagged by its type:
-- ["b", bool] ["i", int64] ["d", double] ["s", text] ["l", [value...]]
-- ["t", nanoseconds since 1970] ["n"] (null), or an error ["e", text],
-- which, as in CEL, && and || absorb when the other side decides.
CREATE FUNCTION public.tollgate_cel_err(p_msg text) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT jsonb_build_array('e', p_msg) $$;

-- The evaluator of schema 11, with the body's nodes, and size and in
-- over a body's map.
CREATE FUNCTION public.tollgate_cel_eval(n jsonb, ctx jsonb, act jsonb, now_ns numeric) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $_$
DECLARE
    tag text := n ->> 0;
    fn text;
    a jsonb;
    b jsonb;
    c jsonb;
    r jsonb;
    i int;
    items jsonb := '[]'::jsonb;
BEGIN
    CASE tag
    WHEN 'b', 'i', 'd', 's' THEN RETURN n;
    WHEN 'null' THEN RETURN '["n"]'::jsonb;
    WHEN 'now' THEN RETURN jsonb_build_array('t', to_jsonb(now_ns));
    WHEN 'ctx' THEN
        IF ctx ? (n ->> 1) THEN RETURN ctx -> (n ->> 1); END IF;
        RETURN tollgate_cel_err('no such key: ' || (n ->> 1));
    WHEN 'has' THEN RETURN jsonb_build_array('b', ctx ? (n ->> 1));
    WHEN 'body', 'hasbody' THEN RETURN tollgate_cel_body_path(n, act);
    WHEN 'act' THEN
        IF n ->> 1 IN ('kind', 'target', 'agent') AND act ? (n ->> 1) THEN
            IF jsonb_typeof(act -> (n ->> 1)) = 'null' THEN
                RAISE EXCEPTION 'the action''s target is not known to the database (a redacted payload)' USING ERRCODE = 'TG002';
            END IF;
            RETURN jsonb_build_array('s', act -> (n ->> 1));
        END IF;
        RETURN tollgate_cel_err('no such key: ' || (n ->> 1));
    WHEN 'hasact' THEN RETURN jsonb_build_array('b', n ->> 1 IN ('kind', 'target', 'agent', 'body') AND act ? (n ->> 1));
    WHEN 'list' THEN
        FOR i IN 1 .. jsonb_array_length(n) - 1 LOOP
            r := tollgate_cel_eval(n -> i, ctx, act, now_ns);
            IF r ->> 0 = 'e' THEN RETURN r; END IF;
            items := items || jsonb_build_array(r);
        END LOOP;
        RETURN jsonb_build_array('l', items);
    WHEN 'call' THEN
        NULL;
    ELSE
        RAISE EXCEPTION 'not a condition node: %', left(n::text, 100) USING ERRCODE = 'TG002';
    END CASE;
    fn := n ->> 1;
    -- The logical operators decide on either side, as CEL's do.
    IF fn IN ('_&&_', '_||_') THEN
        a := tollgate_cel_eval(n -> 2, ctx, act, now_ns);
        IF a = jsonb_build_array('b', fn = '_||_') THEN RETURN a; END IF;
        b := tollgate_cel_eval(n -> 3, ctx, act, now_ns);
        IF b = jsonb_build_array('b', fn = '_||_') THEN RETURN b; END IF;
        IF a ->> 0 = 'b' AND b ->> 0 = 'b' THEN RETURN b; END IF;
        IF a ->> 0 = 'e' THEN RETURN a; END IF;
        IF b ->> 0 = 'e' THEN RETURN b; END IF;
        RETURN tollgate_cel_err('no such overload: ' || fn);
    END IF;
    IF fn = '_?_:_' THEN
        c := tollgate_cel_eval(n -> 2, ctx, act, now_ns);
        IF c ->> 0 = 'e' THEN RETURN c; END IF;
        IF c ->> 0 <> 'b' THEN RETURN tollgate_cel_err('no such overload: ?:'); END IF;
        RETURN tollgate_cel_eval(n -> CASE WHEN (c ->> 1)::bool THEN 3 ELSE 4 END, ctx, act, now_ns);
    END IF;
    a := tollgate_cel_eval(n -> 2, ctx, act, now_ns);
    IF jsonb_array_length(n) > 3 THEN
        b := tollgate_cel_eval(n -> 3, ctx, act, now_ns);
    END IF;
    IF a ->> 0 = 'e' THEN RETURN a; END IF;
    IF b ->> 0 = 'e' THEN RETURN b; END IF;
    CASE fn
    WHEN '!_' THEN
        IF a ->> 0 = 'b' THEN RETURN jsonb_build_array('b', NOT (a ->> 1)::bool); END IF;
    WHEN '-_' THEN
        IF a ->> 0 = 'i' THEN
            IF (a ->> 1)::numeric = -9223372036854775808 THEN RETURN tollgate_cel_err('integer overflow'); END IF;
            RETURN jsonb_build_array('i', -(a ->> 1)::bigint);
        ELSIF a ->> 0 = 'd' THEN
            RETURN tollgate_cel_d(-tollgate_cel_f8(a));
        END IF;
    WHEN '_==_' THEN RETURN tollgate_cel_eq(a, b);
    WHEN '_!=_' THEN
        r := tollgate_cel_eq(a, b);
        IF r ->> 0 = 'b' THEN RETURN jsonb_build_array('b', NOT (r ->> 1)::bool); END IF;
        RETURN r;
    WHEN '_<_', '_<=_', '_>_', '_>=_' THEN
        r := tollgate_cel_cmp(a, b);
        IF r ->> 0 = 'e' THEN RETURN r; END IF;
        i := (r ->> 1)::int;
        RETURN jsonb_build_array('b', CASE fn WHEN '_<_' THEN i < 0 WHEN '_<=_' THEN i <= 0 WHEN '_>_' THEN i > 0 ELSE i >= 0 END);
    WHEN '_+_', '_-_', '_*_', '_/_', '_%_' THEN RETURN tollgate_cel_arith(fn, a, b);
    WHEN '@in' THEN
        IF b ->> 0 = 'l' THEN
            FOR i IN 0 .. jsonb_array_length(b -> 1) - 1 LOOP
                r := tollgate_cel_eq(a, b -> 1 -> i);
                IF r = '["b", true]'::jsonb THEN RETURN r; END IF;
            END LOOP;
            RETURN jsonb_build_array('b', false);
        END IF;
        IF b ->> 0 = 'm' AND a ->> 0 = 's' THEN
            RETURN jsonb_build_array('b', (b -> 1) ? (a ->> 1));
        END IF;
    WHEN 'size' THEN
        IF a ->> 0 = 's' THEN RETURN jsonb_build_array('i', length(a ->> 1)); END IF;
        IF a ->> 0 = 'l' THEN RETURN jsonb_build_array('i', jsonb_array_length(a -> 1)); END IF;
        IF a ->> 0 = 'm' THEN RETURN jsonb_build_array('i', (SELECT count(*) FROM jsonb_object_keys(a -> 1))); END IF;
    WHEN 'startsWith', 'endsWith', 'contains' THEN
        IF a ->> 0 = 's' AND b ->> 0 = 's' THEN
            RETURN jsonb_build_array('b', CASE fn
                WHEN 'startsWith' THEN starts_with(a ->> 1, b ->> 1)
                WHEN 'endsWith' THEN right(a ->> 1, length(b ->> 1)) = (b ->> 1)
                ELSE strpos(a ->> 1, b ->> 1) > 0 END);
        END IF;
    WHEN 'timestamp' THEN
        IF a ->> 0 = 's' THEN RETURN tollgate_cel_timestamp(a ->> 1); END IF;
        IF a ->> 0 = 't' THEN RETURN a; END IF;
        IF a ->> 0 = 'i' THEN RETURN jsonb_build_array('t', to_jsonb((a ->> 1)::numeric * 1000000000)); END IF;
    WHEN 'int' THEN
        CASE a ->> 0
        WHEN 'i' THEN RETURN a;
        WHEN 'd' THEN
            BEGIN
                IF tollgate_cel_f8(a) = 'NaN'::float8 OR tollgate_cel_f8(a) >= 9223372036854775807::float8 OR tollgate_cel_f8(a) <= -9223372036854775808::float8 THEN
                    RETURN tollgate_cel_err('int: range error');
                END IF;
                RETURN jsonb_build_array('i', trunc(tollgate_cel_f8(a))::bigint);
            EXCEPTION WHEN numeric_value_out_of_range THEN
                RETURN tollgate_cel_err('int: range error');
            END;
        WHEN 's' THEN
            IF (a ->> 1) ~ '^[+-]?[0-9]+$' THEN
                BEGIN
                    RETURN jsonb_build_array('i', (a ->> 1)::bigint);
                EXCEPTION WHEN numeric_value_out_of_range THEN
                    RETURN tollgate_cel_err('int: range error');
                END;
            END IF;
            RETURN tollgate_cel_err('int: not an integer: ' || (a ->> 1));
        WHEN 't' THEN RETURN jsonb_build_array('i', floor((a ->> 1)::numeric / 1000000000)::bigint);
        ELSE NULL;
        END CASE;
    WHEN 'double' THEN
        CASE a ->> 0
        WHEN 'd' THEN RETURN a;
        WHEN 'i' THEN RETURN tollgate_cel_d((a ->> 1)::float8);
        WHEN 's' THEN
            IF (a ->> 1) ~ '^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$' THEN
                BEGIN
                    RETURN tollgate_cel_d((a ->> 1)::float8);
                EXCEPTION WHEN numeric_value_out_of_range OR invalid_text_representation THEN
                    RETURN tollgate_cel_err('double: range error');
                END;
            END IF;
            RETURN tollgate_cel_err('double: not a number: ' || (a ->> 1));
        ELSE NULL;
        END CASE;
    WHEN 'getFullYear', 'getMonth', 'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear', 'getHours', 'getMinutes',
        'getSeconds', 'getMilliseconds' THEN
        RETURN tollgate_cel_getter(fn, a, b);
    ELSE
        RAISE EXCEPTION 'not a function the database evaluates: %', fn USING ERRCODE = 'TG002';
    END CASE;
    RETURN tollgate_cel_err('no such overload: ' || fn || ' of ' || coalesce(a ->> 0, '') || coalesce(' and ' || (b ->> 0), ''));
END $_$;

CREATE FUNCTION public.tollgate_cel_f8(p jsonb) RETURNS double precision
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT (p ->> 1)::float8 $$;

-- The timestamp getters, in UTC or the named zone (an IANA name or a
-- fixed offset ±HH:MM), numbered as CEL numbers them.
CREATE FUNCTION public.tollgate_cel_getter(fn text, t jsonb, tz jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $_$
DECLARE
    ns numeric;
    ms numeric;
    utc timestamptz;
    loc timestamp;
    zone text := 'UTC';
    m text[];
BEGIN
    IF t ->> 0 = 'e' THEN RETURN t; END IF;
    IF tz ->> 0 = 'e' THEN RETURN tz; END IF;
    IF t ->> 0 <> 't' OR (tz IS NOT NULL AND tz ->> 0 <> 's') THEN
        RETURN tollgate_cel_err('no such overload: ' || fn);
    END IF;
    ns := (t ->> 1)::numeric;
    ms := floor(ns / 1000000);
    IF fn = 'getMilliseconds' THEN
        RETURN jsonb_build_array('i', mod(mod(ms, 1000) + 1000, 1000)::bigint);
    END IF;
    utc := to_timestamp(0) + make_interval(secs => (floor(ms / 1000))::float8);
    IF tz IS NOT NULL THEN
        zone := tz ->> 1;
    END IF;
    m := regexp_match(zone, '^([+-])([0-9]{2}):([0-9]{2})$');
    BEGIN
        IF m IS NOT NULL THEN
            loc := (utc AT TIME ZONE 'UTC') + make_interval(mins => (m[2]::int * 60 + m[3]::int) * CASE WHEN m[1] = '-' THEN -1 ELSE 1 END);
        ELSIF zone !~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$' THEN
            RETURN tollgate_cel_err('unknown time zone ' || zone);
        ELSE
            loc := utc AT TIME ZONE zone;
        END IF;
    EXCEPTION WHEN OTHERS THEN
        RETURN tollgate_cel_err('unknown time zone ' || zone);
    END;
    RETURN jsonb_build_array('i', CASE fn
        WHEN 'getFullYear' THEN extract(year FROM loc)
        WHEN 'getMonth' THEN extract(month FROM loc) - 1
        WHEN 'getDate' THEN extract(day FROM loc)
        WHEN 'getDayOfMonth' THEN extract(day FROM loc) - 1
        WHEN 'getDayOfWeek' THEN extract(dow FROM loc)
        WHEN 'getDayOfYear' THEN extract(doy FROM loc) - 1
        WHEN 'getHours' THEN extract(hour FROM loc)
        WHEN 'getMinutes' THEN extract(minute FROM loc)
        WHEN 'getSeconds' THEN floor(extract(second FROM loc))
        END::bigint);
END $_$;

-- A context value (canonical JSON: a string, a number, a boolean or a
-- list of strings) as a CEL value: every number is a double, kept as the
-- canonical decimal, which float8's input reads exactly as Go does.
CREATE FUNCTION public.tollgate_cel_of(p jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    items jsonb := '[]'::jsonb;
    i int;
BEGIN
    CASE jsonb_typeof(p)
    WHEN 'string' THEN RETURN jsonb_build_array('s', p);
    WHEN 'number' THEN RETURN jsonb_build_array('d', p);
    WHEN 'boolean' THEN RETURN jsonb_build_array('b', p);
    WHEN 'array' THEN
        FOR i IN 0 .. jsonb_array_length(p) - 1 LOOP
            items := items || jsonb_build_array(jsonb_build_array('s', p -> i));
        END LOOP;
        RETURN jsonb_build_array('l', items);
    ELSE RETURN jsonb_build_array('n');
    END CASE;
END $$;

-- timestamp(string): RFC 3339, as Go's time.Parse(time.RFC3339) reads it.
CREATE FUNCTION public.tollgate_cel_timestamp(p text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
DECLARE
    m text[];
    secs numeric;
    frac numeric := 0;
    off numeric := 0;
BEGIN
    m := regexp_match(p, '^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?(Z|([+-])([0-9]{2}):([0-9]{2}))$');
    IF m IS NULL OR m[4]::int > 23 OR m[5]::int > 59 OR m[6]::int > 59 OR (m[10] IS NOT NULL AND (m[10]::int > 23 OR m[11]::int > 59)) THEN
        RETURN tollgate_cel_err('timestamp: not RFC 3339: ' || p);
    END IF;
    BEGIN
        secs := extract(epoch FROM make_timestamp(m[1]::int, m[2]::int, m[3]::int, m[4]::int, m[5]::int, m[6]::int));
    EXCEPTION WHEN OTHERS THEN
        RETURN tollgate_cel_err('timestamp: out of range: ' || p);
    END;
    IF m[1]::int < 1 THEN
        RETURN tollgate_cel_err('timestamp: out of range: ' || p);
    END IF;
    IF m[7] IS NOT NULL THEN
        frac := ('0' || m[7])::numeric;
    END IF;
    IF m[9] IS NOT NULL THEN
        off := (m[10]::int * 3600 + m[11]::int * 60) * CASE WHEN m[9] = '-' THEN -1 ELSE 1 END;
    END IF;
    RETURN jsonb_build_array('t', to_jsonb(((secs - off + frac) * 1000000000)::numeric(30, 0)));
END $_$;

CREATE FUNCTION public.tollgate_check_agent_name() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF tollgate_copying() THEN RETURN NEW; END IF;
    IF NOT tollgate_name_ok(NEW.agent) THEN
        PERFORM tollgate_refuse(NEW.action_key, 'an agent name of more than 200 bytes or with a control or format character');
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION public.tollgate_check_approval_request() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $$
DECLARE
    e record;
BEGIN
    IF tollgate_copying() THEN RETURN NEW; END IF;
    SELECT mode, ttl_ms INTO e FROM policy_evals WHERE action_key = NEW.action_key;
    IF NOT FOUND OR e.mode <> 'approval' THEN
        PERFORM tollgate_refuse(NEW.action_key, 'an approval request needs an evaluation that asks for approval');
    END IF;
    IF NOT tollgate_clock_ok(NEW.requested_ms) OR NEW.expires_ms <> NEW.requested_ms + e.ttl_ms THEN
        PERFORM tollgate_refuse(NEW.action_key, 'an approval request is made now and expires after its rule''s TTL');
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION public.tollgate_check_event() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $_$
DECLARE
    f record;
    v_xmin xid;
    v_key text;
    v_row jsonb;
    v_bad text;
BEGIN
    IF tollgate_copying() OR tollgate_sealing() THEN RETURN NEW; END IF;
    IF NEW.fact_table = '' THEN
        IF NEW.fact_row <> '' OR NEW.fact_sha256 <> '' THEN
            v_bad := 'names a fact row but no table';
        ELSIF NEW.type IN (SELECT type FROM tollgate_private.fact_events) THEN
            v_bad := 'commits no fact row though its type commits one';
        ELSIF tollgate_agent_only() AND NOT (NEW.type = 'disagreement_flagged'
                AND EXISTS (SELECT 1 FROM reports r WHERE r.action_key = NEW.action_key AND tollgate_xmin_mine(r.xmin)
                    AND r.permit_id = NEW.actor)) THEN
            v_bad := 'is not an event an agent''s role appends';
        END IF;
    ELSE
        SELECT * INTO f FROM tollgate_private.fact_events e WHERE e.fact_table = NEW.fact_table AND e.type = NEW.type;
        IF NOT FOUND THEN
            v_bad := 'names a table its type does not commit';
        ELSIF tollgate_agent_only() AND NOT f.agents THEN
            v_bad := 'commits a fact an agent''s role does not write';
        ELSE
            EXECUTE format('SELECT t.xmin, %s, to_jsonb(t) FROM %s t WHERE t.%I::text = $1',
                    CASE WHEN f.key_col = '' THEN '''''::text' ELSE 't.' || quote_ident(f.key_col) || '::text' END,
                    coalesce(to_regclass('tollgate_private.' || quote_ident(f.fact_table)), ('public.' || quote_ident(f.fact_table))::regclass),
                    f.id_col)
                INTO v_xmin, v_key, v_row USING NEW.fact_row;
            IF v_xmin IS NULL THEN
                v_bad := 'names a fact row that does not exist';
            ELSIF NOT tollgate_xmin_mine(v_xmin) THEN
                v_bad := 'names a fact row another transaction wrote';
            ELSIF f.key_col <> '' AND v_key IS DISTINCT FROM NEW.action_key THEN
                v_bad := 'names a fact row of another key';
            ELSIF f.agents AND NEW.fact_sha256 IS DISTINCT FROM tollgate_fact_hash(NEW.fact_table, v_row) THEN
                v_bad := 'names a fact row with another hash';
            ELSIF EXISTS (SELECT 1 FROM events e WHERE e.fact_table = NEW.fact_table AND e.fact_row = NEW.fact_row)
                    OR EXISTS (SELECT 1 FROM pending_events e WHERE e.fact_table = NEW.fact_table AND e.fact_row = NEW.fact_row) THEN
                v_bad := 'names a fact row another event commits';
            ELSIF tollgate_agent_only() AND NEW.actor IS DISTINCT FROM session_user THEN
                IF NEW.fact_table IN ('reports', 'report_refusals') THEN
                    IF NEW.actor IS DISTINCT FROM v_row ->> 'permit_id' THEN
                        v_bad := 'names an actor other than the permit it reports under';
                    END IF;
                ELSIF NOT tollgate_private.agent_name_allowed(NEW.actor) THEN
                    v_bad := format('names %s as its actor, a name the role %s may not act as (tollgate agents allow)', NEW.actor, session_user);
                END IF;
            END IF;
        END IF;
    END IF;
    IF v_bad IS NOT NULL THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a %s event that %s', NEW.type, v_bad));
    END IF;
    RETURN NEW;
END $_$;

CREATE FUNCTION public.tollgate_check_fact_committed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_id text;
BEGIN
    IF tollgate_copying() THEN RETURN NULL; END IF;
    SELECT to_jsonb(NEW) ->> e.id_col INTO v_id FROM tollgate_private.fact_events e WHERE e.fact_table = TG_TABLE_NAME LIMIT 1;
    IF NOT EXISTS (SELECT 1 FROM events e WHERE e.fact_table = TG_TABLE_NAME AND e.fact_row = v_id)
        AND NOT EXISTS (SELECT 1 FROM pending_events e WHERE e.fact_table = TG_TABLE_NAME AND e.fact_row = v_id) THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a %s row that no event of its transaction commits', TG_TABLE_NAME));
    END IF;
    RETURN NULL;
END $$;

-- A payload row is what its canonical text says: the text is the
-- canonical encoding of its three fields (SPEC 2: no duplicate, extra or
-- missing field, no spaces, Python's escapes), each field at most 4000
-- code points (ledger/payload.go MaxFieldRunes), its SHA-256 the row's
-- digest, and the kind column and the kind, target and body digests
-- those of its fields; its context is in canonical form, with its
-- digest. A redacted row keeps no text: its kind column must still be
-- the kind its kind digest names, and its context is checked alike.
-- Changed in place since by development schema 41: a redacted payload's
-- kind, target and body digests are bound to its payload digest on
-- every path (issue 41). (that migration, in the history, says more).
CREATE FUNCTION public.tollgate_check_payload_row() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    j jsonb;
    v_body text;
    v_kind text;
    v_target text;
    v_bad text;
    v_sent text := CASE WHEN NEW.redacted = 1 AND NEW.canonical IS NULL THEN nullif(current_setting('tollgate.redacted_text', true), '') END;
    v_text text := coalesce(NEW.canonical, v_sent);
    v_mark text;
    i int;
BEGIN
    IF tollgate_copying() THEN RETURN NEW; END IF;
    -- PostgreSQL's text holds no NUL, which a field may (SPEC 2: any
    -- valid UTF-8): each \u0000 escape is read as a private-use
    -- character the text does not name otherwise, and hashed as NUL.
    IF position('\u0000' IN v_text) > 0 THEN
        FOR i IN 0 .. 255 LOOP
            IF position('\ue0' || lpad(to_hex(i), 2, '0') IN v_text) = 0 THEN
                v_mark := chr(57344 + i);
                v_text := regexp_replace(v_text, '(?<!\\)((?:\\\\)*)\\u0000', '\1\\ue0' || lpad(to_hex(i), 2, '0'), 'g');
                EXIT;
            END IF;
        END LOOP;
    END IF;
    IF char_length(NEW.kind) > 4000 THEN
        v_bad := 'a kind of more than 4000 code points';
    ELSIF NEW.kind_sha256 IS DISTINCT FROM tollgate_sha256_hex(NEW.kind) THEN
        v_bad := 'a kind digest that is not the kind''s';
    ELSIF NEW.context IS DISTINCT FROM tollgate_context_canonical(NEW.context) THEN
        v_bad := 'a context that is not in canonical form (SPEC 10)';
    ELSIF NEW.context_sha256 IS DISTINCT FROM (CASE WHEN NEW.context = '' THEN '' ELSE tollgate_sha256_hex(NEW.context) END) THEN
        v_bad := 'a context digest that is not the context''s';
    ELSIF NEW.redacted = 1 AND NEW.canonical IS NULL AND v_sent IS NULL THEN
        v_bad := 'a redacted payload whose text was not sent: the database hashes it, binds its kind, target and body digests to the payload digest, and keeps the digests only (tollgate.redacted_text, schema 41)';
    ELSIF v_text IS NOT NULL THEN
        BEGIN
            j := v_text::jsonb;
        EXCEPTION WHEN OTHERS THEN
            j := NULL;
        END;
        IF jsonb_typeof(j) IS DISTINCT FROM 'object' OR jsonb_typeof(j -> 'body') IS DISTINCT FROM 'string'
            OR jsonb_typeof(j -> 'kind') IS DISTINCT FROM 'string' OR jsonb_typeof(j -> 'target') IS DISTINCT FROM 'string' THEN
            v_bad := 'a canonical text that is not an object of the string fields body, kind and target';
        ELSE
            v_body := j ->> 'body';
            v_kind := j ->> 'kind';
            v_target := j ->> 'target';
            IF char_length(v_body) > 4000 OR char_length(v_kind) > 4000 OR char_length(v_target) > 4000 THEN
                v_bad := 'a payload field of more than 4000 code points';
            ELSIF v_text IS DISTINCT FROM '{"body":' || tollgate_py_string(v_body) || ',"kind":' || tollgate_py_string(v_kind)
                    || ',"target":' || tollgate_py_string(v_target) || '}' THEN
                v_bad := 'a canonical text that is not the canonical encoding of its fields';
            ELSIF NEW.payload_sha256 IS DISTINCT FROM tollgate_sha256_hex(coalesce(NEW.canonical, v_sent)) THEN
                v_bad := 'a payload digest that is not the canonical text''s';
            ELSIF NEW.kind IS DISTINCT FROM v_kind THEN
                v_bad := 'a kind column that is not the canonical text''s kind';
            ELSIF NEW.target_sha256 IS DISTINCT FROM tollgate_sha256_nul(v_target, v_mark) OR NEW.body_sha256 IS DISTINCT FROM tollgate_sha256_nul(v_body, v_mark) THEN
                v_bad := 'a target or body digest that is not the canonical text''s';
            END IF;
        END IF;
    END IF;
    IF v_bad IS NOT NULL THEN
        PERFORM tollgate_refuse(NEW.action_key, 'a payload row with ' || v_bad);
    END IF;
    IF v_sent IS NOT NULL THEN
        PERFORM set_config('tollgate.redacted_text', '', true);
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION public.tollgate_check_permit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $$
DECLARE
    e record;
    v_active text;
    v_requester text;
BEGIN
    IF tollgate_copying() THEN RETURN NEW; END IF;
    IF NOT tollgate_clock_ok(NEW.issued_ms) THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a permit issued at %s ms is not issued at the database''s time', NEW.issued_ms));
    END IF;
    SELECT mode, approvers INTO e FROM policy_evals WHERE action_key = NEW.action_key;
    IF NOT FOUND OR e.mode = 'deny' THEN
        PERFORM tollgate_refuse(NEW.action_key, 'a permit needs a policy evaluation that allows it');
    END IF;
    IF e.mode = 'approval' AND NOT EXISTS (
        SELECT 1 FROM decisions d JOIN approval_requests r ON r.action_key = d.action_key
        WHERE d.action_key = NEW.action_key AND d.decision = 'approved' AND d.at_ms < r.expires_ms
          AND EXISTS (SELECT 1 FROM events ev WHERE ev.fact_table = 'decisions' AND ev.fact_row = d.action_key)
          AND (SELECT count(DISTINCT v.name_key) FROM votes v WHERE v.action_key = d.action_key AND v.decision = 'approved'
               AND EXISTS (SELECT 1 FROM events ev WHERE ev.fact_table = 'votes' AND ev.fact_row = v.id::text)) >= e.approvers) THEN
        PERFORM tollgate_refuse(NEW.action_key, 'a permit under an approval rule needs its committed approval, by its quorum, before the request expired');
    END IF;
    IF e.mode = 'approval' THEN
        SELECT p.db_role INTO v_requester FROM tollgate_private.payloads p WHERE p.action_key = NEW.action_key;
        IF v_requester <> '' AND v_requester <> session_user AND NOT tollgate_sees_bodies() THEN
            PERFORM tollgate_refuse(NEW.action_key, format('the approval was for the request of the role %s; only it or an operator takes its permit', v_requester));
        END IF;
    END IF;
    SELECT epoch INTO v_active FROM epochs ORDER BY seq DESC LIMIT 1;
    IF v_active IS NOT NULL AND NOT starts_with(NEW.action_key, 'hsr1:' || v_active || ':') THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a permit needs a key of the active epoch %s', v_active));
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION public.tollgate_check_policy_eval() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $$
DECLARE
    p record;
    d record;
BEGIN
    IF tollgate_copying() THEN RETURN NEW; END IF;
    IF NOT tollgate_clock_ok(NEW.at_ms) THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a policy evaluation at %s ms is not the database''s time', NEW.at_ms));
    END IF;
    SELECT kind, agent, context, canonical, target_sha256 INTO p FROM tollgate_private.payloads WHERE action_key = NEW.action_key;
    IF NOT FOUND THEN
        PERFORM tollgate_refuse(NEW.action_key, 'no stored payload to evaluate the policy for');
    END IF;
    d := tollgate_policy_decide(p.kind, tollgate_action_target(p.canonical, p.target_sha256), p.agent, p.context,
        tollgate_action_body(p.canonical), NEW.at_ms);
    IF NEW.mode IS DISTINCT FROM d.o_mode OR NEW.rule_id IS DISTINCT FROM d.o_rule OR NEW.ttl_ms IS DISTINCT FROM d.o_ttl_ms
        OR NEW.approvers IS DISTINCT FROM d.o_approvers OR NEW.pattern IS DISTINCT FROM d.o_pattern THEN
        PERFORM tollgate_refuse(NEW.action_key, format('the rules decide %s (rule %s, pattern %s, ttl %s ms, %s approvers), not %s (rule %s)',
            d.o_mode, coalesce(d.o_rule::text, 'none'), d.o_pattern, d.o_ttl_ms, d.o_approvers, NEW.mode, coalesce(NEW.rule_id::text, 'none')));
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION public.tollgate_check_report() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    p record;
    v_reconciled boolean;
BEGIN
    IF tollgate_copying() THEN RETURN NEW; END IF;
    SELECT permit_id, lease_ms, db_role INTO p FROM permits WHERE action_key = NEW.action_key;
    IF NOT FOUND OR NEW.permit_id IS DISTINCT FROM p.permit_id THEN
        PERFORM tollgate_refuse(NEW.action_key, 'a report carries the key''s permit id');
    END IF;
    IF p.db_role <> '' AND p.db_role <> session_user AND NOT tollgate_sees_bodies() THEN
        PERFORM tollgate_refuse(NEW.action_key, format('the permit was issued to the role %s; only it or an operator reports under it', p.db_role));
    END IF;
    IF NOT tollgate_clock_ok(NEW.at_ms) THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a report at %s ms is not at the database''s time', NEW.at_ms));
    END IF;
    v_reconciled := EXISTS (SELECT 1 FROM reconciliations WHERE action_key = NEW.action_key);
    IF NEW.kind = 'accepted' AND (NEW.at_ms >= p.lease_ms OR v_reconciled) THEN
        PERFORM tollgate_refuse(NEW.action_key, 'a report after the lease or after reconciliation is late, not accepted');
    END IF;
    IF NEW.kind = 'refused' AND NOT EXISTS (SELECT 1 FROM reports WHERE action_key = NEW.action_key AND kind = 'accepted' AND outcome <> NEW.outcome) THEN
        PERFORM tollgate_refuse(NEW.action_key, 'a report is refused only when it differs from the accepted one');
    END IF;
    RETURN NEW;
END $$;

-- The most a fact's time may differ from the database's clock, in
-- milliseconds: 60 s unless the database's owner set
-- tollgate.clock_skew_ms for the whole database (ALTER DATABASE ... SET,
-- which no agent or operator role may run; a negative value lifts the
-- bound, for tests with an injected clock). A session's own SET of the
-- same name is not read.
CREATE FUNCTION public.tollgate_clock_ok(p_at_ms bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $_$
DECLARE
    v_set text;
    v_skew bigint := 60000;
BEGIN
    SELECT substr(c, length('tollgate.clock_skew_ms=') + 1) INTO v_set
        FROM pg_catalog.pg_db_role_setting s, unnest(s.setconfig) c
        WHERE s.setrole = 0 AND s.setdatabase = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
          AND c LIKE 'tollgate.clock\_skew\_ms=%';
    IF v_set ~ '^-?[0-9]{1,15}$' THEN
        v_skew := v_set::bigint;
    END IF;
    RETURN v_skew < 0 OR abs(p_at_ms - (extract(epoch FROM clock_timestamp()) * 1000)::bigint) <= v_skew;
END $_$;

-- Whether a condition holds over a context as it was sent (the
-- differential tests call this one).
CREATE FUNCTION public.tollgate_condition_holds(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric) RETURNS boolean
    LANGUAGE sql STABLE
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $$ SELECT tollgate_condition_holds_cel(p_ast, tollgate_cel_context(ctx), act, now_ns) $$;

-- Whether a condition holds: true, false, or NULL when it cannot be
-- evaluated, a field it reads missing included (semantics 2: the
-- decision fails closed, tollgate_private.policy_decide_at).
CREATE FUNCTION public.tollgate_condition_holds_cel(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric) RETURNS boolean
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    r jsonb;
BEGIN
    IF p_ast -> 'v' IS DISTINCT FROM '1'::jsonb THEN
        RAISE EXCEPTION 'a condition translation of an unknown version' USING ERRCODE = 'TG002';
    END IF;
    r := tollgate_cel_eval(p_ast -> 'expr', ctx, act, now_ns);
    IF r ->> 0 = 'b' THEN
        RETURN (r ->> 1)::bool;
    END IF;
    RETURN NULL;
END $$;

-- A context's canonical form (ledger/actioncontext.go ParseContext and
-- Canonical): at most 32 fields named [a-z][a-z0-9_]{0,63}, sorted, each
-- a string of at most 1000 code points, a finite number, a boolean or a
-- list of at most 64 such strings; the empty string for no field; NULL
-- for a text the client refuses.
CREATE FUNCTION public.tollgate_context_canonical(p text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'public', 'pg_temp'
    AS $_$
DECLARE
    j jsonb;
    f record;
    e jsonb;
    v_out text := '';
    v_val text;
    v_n int := 0;
BEGIN
    IF p = '' THEN
        RETURN '';
    END IF;
    BEGIN
        j := p::jsonb;
    EXCEPTION WHEN OTHERS THEN
        RETURN NULL;
    END;
    IF jsonb_typeof(j) IS DISTINCT FROM 'object' THEN
        RETURN NULL;
    END IF;
    FOR f IN SELECT key, value FROM jsonb_each(j) ORDER BY key COLLATE "C" LOOP
        v_n := v_n + 1;
        IF v_n > 32 OR f.key !~ '^[a-z][a-z0-9_]{0,63}$' THEN
            RETURN NULL;
        END IF;
        CASE jsonb_typeof(f.value)
        WHEN 'string' THEN
            IF char_length(f.value #>> '{}') > 1000 THEN RETURN NULL; END IF;
            v_val := tollgate_py_string(f.value #>> '{}');
        WHEN 'boolean' THEN
            v_val := f.value::text;
        WHEN 'number' THEN
            BEGIN
                v_val := tollgate_go_number((f.value #>> '{}')::float8);
            EXCEPTION WHEN OTHERS THEN
                RETURN NULL;
            END;
        WHEN 'array' THEN
            IF jsonb_array_length(f.value) > 64 THEN RETURN NULL; END IF;
            v_val := '';
            FOR e IN SELECT x FROM jsonb_array_elements(f.value) WITH ORDINALITY AS a(x, n) ORDER BY n LOOP
                IF jsonb_typeof(e) IS DISTINCT FROM 'string' OR char_length(e #>> '{}') > 1000 THEN RETURN NULL; END IF;
                v_val := v_val || CASE WHEN v_val = '' THEN '' ELSE ',' END || tollgate_py_string(e #>> '{}');
            END LOOP;
            v_val := '[' || v_val || ']';
        ELSE
            RETURN NULL;
        END CASE;
        v_out := v_out || CASE WHEN v_n = 1 THEN '{' ELSE ',' END || tollgate_py_string(f.key) || ':' || v_val;
    END LOOP;
    IF v_n = 0 THEN
        RETURN '';
    END IF;
    v_out := v_out || '}';
    IF octet_length(v_out) > 8192 THEN
        RETURN NULL;
    END IF;
    RETURN v_out;
END $_$;

-- A copy of a ledger (migrate --from) brings facts that were checked
-- where they were made, with their own times: the schema's owner may
-- mark its transaction as a copy (SET LOCAL tollgate.copying = 'on');
-- for any other role the mark means nothing.
CREATE FUNCTION public.tollgate_copying() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    SELECT coalesce(current_setting('tollgate.copying', true), '') = 'on'
        AND pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'MEMBER')
$$;

-- An operator's real vote sets aside a vote row no event commits, which
-- only the schema's owner can have written and which holds the
-- operator's one vote on the request: the row is first copied to
-- set_aside (by the operator's own insert, committed by its event), and
-- this function, the owner's, then removes it from votes. It removes
-- nothing else: a row an event commits, sealed or pending, is a vote, and
-- a row not set aside in this very transaction stays.
CREATE FUNCTION public.tollgate_drop_forged_vote(p_id bigint) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM events e WHERE e.fact_table = 'votes' AND e.fact_row = p_id::text)
       OR EXISTS (SELECT 1 FROM pending_events e WHERE e.fact_table = 'votes' AND e.fact_row = p_id::text) THEN
        RAISE EXCEPTION 'votes row % is committed by an event: a vote, not a forgery', p_id USING ERRCODE = 'TG001';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM set_aside s WHERE s.fact_table = 'votes'
                   AND (s.row_json::jsonb ->> 'id')::bigint = p_id AND tollgate_xmin_mine(s.xmin)) THEN
        RAISE EXCEPTION 'votes row % was not set aside in this transaction', p_id USING ERRCODE = 'TG001';
    END IF;
    ALTER TABLE votes DISABLE TRIGGER votes_append_only;
    ALTER TABLE votes DISABLE TRIGGER votes_no_truncate;
    DELETE FROM votes WHERE id = p_id;
    ALTER TABLE votes ENABLE TRIGGER votes_append_only;
    ALTER TABLE votes ENABLE TRIGGER votes_no_truncate;
END $$;

-- The event hash (byte for byte ledger/events.go's eventHashV2, as schema
-- 8 defined it), computed by a loop instead of an aggregate query that a
-- SQL function plans again for each of a guard's three events.
CREATE FUNCTION public.tollgate_event_hash(prev text, seq bigint, key text, typ text, actor text, detail text, at_ms bigint, fact_table text, fact_row text, fact_sha256 text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog'
    AS $$
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

-- A row's hash as rowHash computes it from the values the driver reads
-- (a number an int64, 'i'; text 's'; NULL 'n'), with tollgate_row_hash
-- (schema 14). NULL for a table not listed above.
CREATE FUNCTION public.tollgate_fact_hash(p_table text, p_row jsonb) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    c record;
    v_tags text[] := '{}';
    v_vals text[] := '{}';
    v text;
BEGIN
    FOR c IN SELECT h.col, h.opt_def, h.tagged FROM tollgate_private.fact_hash_cols h WHERE h.fact_table = p_table ORDER BY h.n LOOP
        v := p_row ->> c.col;
        IF c.opt_def IS NOT NULL AND v IS NOT DISTINCT FROM c.opt_def THEN
            CONTINUE;
        END IF;
        IF c.tagged THEN
            v_tags := v_tags || 'c'::text;
            v_vals := v_vals || c.col::text;
        END IF;
        v_tags := v_tags || CASE jsonb_typeof(p_row -> c.col) WHEN 'number' THEN 'i' WHEN 'string' THEN 's' ELSE 'n' END;
        v_vals := v_vals || v;
    END LOOP;
    IF cardinality(v_tags) = 0 THEN
        RETURN NULL;
    END IF;
    RETURN tollgate_row_hash(p_table, v_tags, v_vals);
END $$;

CREATE FUNCTION public.tollgate_flush(p_events_first boolean, p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], p_index_keys text[], p_index_targets text[], OUT o_seq bigint, OUT o_hash text) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'public', 'pg_temp'
    AS $$
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

-- A string as Go's encoding/json writes it: PostgreSQL's to_json escapes
-- alike but for the HTML characters and the two line separators, which
-- Go writes as \u escapes.
CREATE FUNCTION public.tollgate_go_json(p text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog'
    AS $$
BEGIN
    RETURN replace(replace(replace(replace(replace(to_json(p)::text,
        '<', '\u003c'), '>', '\u003e'), '&', '\u0026'), U&'\2028', '\u2028'), U&'\2029', '\u2029');
END $$;

-- A number in a context's canonical form (ledger/actioncontext.go
-- appendContextValue): an integral one below 2^53 without a fraction,
-- any other as Go's strconv.FormatFloat(x, 'g', -1, 64) writes it, from
-- the shortest digits that read back as the same float, which is what
-- PostgreSQL prints (extra_float_digits 1): %e form when the decimal
-- exponent is below -4 or at least 6, a two-digit exponent at least.
CREATE FUNCTION public.tollgate_go_number(p double precision) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET extra_float_digits TO '1'
    AS $$
DECLARE
    s text;
    v_neg boolean := p < 0;
    v_digits text;
    v_dp int;
    v_exp int;
    v_nd int;
BEGIN
    IF p = trunc(p) AND abs(p) < 9007199254740992 THEN
        RETURN p::bigint::text;
    END IF;
    s := abs(p)::text;
    IF position('e' IN s) > 0 THEN
        v_digits := replace(split_part(s, 'e', 1), '.', '');
        v_dp := split_part(s, 'e', 2)::int + 1;
    ELSIF position('.' IN s) > 0 THEN
        IF split_part(s, '.', 1) = '0' THEN
            v_digits := ltrim(split_part(s, '.', 2), '0');
            v_dp := length(v_digits) - length(split_part(s, '.', 2));
        ELSE
            v_digits := split_part(s, '.', 1) || split_part(s, '.', 2);
            v_dp := length(split_part(s, '.', 1));
        END IF;
    ELSE
        v_digits := s;
        v_dp := length(s);
    END IF;
    v_digits := rtrim(v_digits, '0');
    v_nd := length(v_digits);
    v_exp := v_dp - 1;
    IF v_exp < -4 OR v_exp >= 6 THEN
        s := left(v_digits, 1) || CASE WHEN v_nd > 1 THEN '.' || substr(v_digits, 2) ELSE '' END
            || 'e' || CASE WHEN v_exp < 0 THEN '-' ELSE '+' END || CASE WHEN abs(v_exp) < 10 THEN '0' ELSE '' END || abs(v_exp)::text;
    ELSIF v_dp <= 0 THEN
        s := '0.' || repeat('0', -v_dp) || v_digits;
    ELSIF v_nd <= v_dp THEN
        s := v_digits || repeat('0', v_dp - v_nd);
    ELSE
        s := left(v_digits, v_dp) || '.' || substr(v_digits, v_dp + 1);
    END IF;
    RETURN CASE WHEN v_neg THEN '-' ELSE '' END || s;
END $$;

-- The guard's earlier signature, without an attempt: a thin wrapper
-- kept so that a client written before schema 101 still calls it.
CREATE FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint) RETURNS record
    LANGUAGE sql
    SET search_path TO 'public', 'pg_temp'
    AS $$
    SELECT g.o_path, g.o_answer, g.o_now, g.o_mode, g.o_rule, g.o_pattern, g.o_ttl_ms, g.o_approvers, g.o_permit_id, g.o_lease_ms, g.o_expires_ms, g.o_unsealed
        FROM tollgate_guard(p_key, p_sha256, p_canonical, p_kind, p_target, p_body_sha256, p_agent, p_context_sha256, p_context, p_lease_ms, p_permit_id, p_retry, p_wait_ms, NULL::text) g
$$;

-- The guard in one call (schema 21, with schema 23's gate), its shared
-- parts called rather than written out. Since schema 101 it takes the
-- SHA-256 of the call's attempt id: it stores the attempt with the
-- permit an auto rule issues, and answers that attempt's retry with its
-- permit (path 'attempt'), so a call through tollgate serve, which
-- always carries one, stays one round trip.
CREATE FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, p_attempt_sha256 text, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint, OUT o_agent text) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $_$
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
$_$;

-- Whether tollgate_guard is writing in this transaction: only its rows
-- are being inserted. PL/pgSQL, not SQL: a SQL function that is not
-- inlined plans its query at every call, 0.07 ms here, nine times a
-- guard; PL/pgSQL plans it once per session.
CREATE FUNCTION public.tollgate_guard_writing() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM tollgate_private.guard_writing WHERE txid = txid_current_if_assigned());
END $$;

CREATE FUNCTION public.tollgate_head_forward() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP <> 'UPDATE' OR NEW.one <> OLD.one OR NEW.seq <= OLD.seq THEN
        RAISE EXCEPTION 'the chain head only moves forward' USING ERRCODE = 'TG001';
    END IF;
    RETURN NEW;
END $$;

-- An archived key keeps its intent but no projection row: a copy of an
-- archived ledger (migrate --from) brings its stubs before its intents.
CREATE FUNCTION public.tollgate_index_intent() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'tollgate_private', 'public', 'pg_temp'
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM archived_keys WHERE action_key = NEW.action_key) THEN
        RETURN NULL;
    END IF;
    -- A row already there was copied with its ledger (migrate --from).
    INSERT INTO action_index(action_key, logical_key, payload_sha256) VALUES (NEW.action_key, NEW.action_key, NEW.payload_sha256)
        ON CONFLICT (action_key) DO NOTHING;
    RETURN NULL;
END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

CREATE FUNCTION public.tollgate_insert_agent_tokens(p_cols text[], p_vals text[]) RETURNS public.agent_tokens
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.agent_tokens;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['token_id', 'action', 'name', 'name_key', 'scope', 'digest', 'operator', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 8 THEN
        RAISE EXCEPTION 'tollgate_insert_agent_tokens takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['token_id', 'action', 'name', 'name_key', 'scope', 'digest', 'operator', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO agent_tokens (token_id, action, name, name_key, scope, digest, operator, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::text, p_vals[6]::text, p_vals[7]::text, p_vals[8]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_approval_requests(p_cols text[], p_vals text[]) RETURNS public.approval_requests
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.approval_requests;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'agent', 'requested_ms', 'expires_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 4 THEN
        RAISE EXCEPTION 'tollgate_insert_approval_requests takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'agent', 'requested_ms', 'expires_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO approval_requests (action_key, agent, requested_ms, expires_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::bigint, p_vals[4]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_archives(p_cols text[], p_vals text[]) RETURNS public.archives
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.archives;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['id', 'file', 'ledger_id', 'through_seq', 'through_hash', 'head_seq', 'head_hash', 'keys', 'keys_sha256', 'spans', 'spans_sha256', 'settled_before_ms', 'operator', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 14 THEN
        RAISE EXCEPTION 'tollgate_insert_archives takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['id', 'file', 'ledger_id', 'through_seq', 'through_hash', 'head_seq', 'head_hash', 'keys', 'keys_sha256', 'spans', 'spans_sha256', 'settled_before_ms', 'operator', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO archives (id, file, ledger_id, through_seq, through_hash, head_seq, head_hash, keys, keys_sha256, spans, spans_sha256, settled_before_ms, operator, at_ms) VALUES (p_vals[1]::bigint, p_vals[2]::text, p_vals[3]::text, p_vals[4]::bigint, p_vals[5]::text, p_vals[6]::bigint, p_vals[7]::text, p_vals[8]::bigint, p_vals[9]::text, p_vals[10]::bigint, p_vals[11]::text, p_vals[12]::bigint, p_vals[13]::text, p_vals[14]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_conflict_reviews(p_cols text[], p_vals text[]) RETURNS public.conflict_reviews
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.conflict_reviews;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['conflict_id', 'operator', 'note', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 4 THEN
        RAISE EXCEPTION 'tollgate_insert_conflict_reviews takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['conflict_id', 'operator', 'note', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO conflict_reviews (conflict_id, operator, note, at_ms) VALUES (p_vals[1]::bigint, p_vals[2]::text, p_vals[3]::text, p_vals[4]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_conflicts(p_cols text[], p_vals text[]) RETURNS public.conflicts
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.conflicts;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'stored_sha256', 'attempted_sha256', 'attempted', 'redacted', 'differs', 'agent', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 8 THEN
        RAISE EXCEPTION 'tollgate_insert_conflicts takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'stored_sha256', 'attempted_sha256', 'attempted', 'redacted', 'differs', 'agent', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO tollgate_private.conflicts (action_key, stored_sha256, attempted_sha256, attempted, redacted, differs, agent, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::bigint, p_vals[6]::text, p_vals[7]::text, p_vals[8]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_decisions(p_cols text[], p_vals text[]) RETURNS public.decisions
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.decisions;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'decision', 'operator', 'reason', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 5 THEN
        RAISE EXCEPTION 'tollgate_insert_decisions takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'decision', 'operator', 'reason', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO decisions (action_key, decision, operator, reason, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_epochs(p_cols text[], p_vals text[]) RETURNS public.epochs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.epochs;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['epoch', 'operator', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 3 THEN
        RAISE EXCEPTION 'tollgate_insert_epochs takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['epoch', 'operator', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO epochs (epoch, operator, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_fenced(p_cols text[], p_vals text[]) RETURNS public.fenced
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.fenced;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'key_epoch', 'active_epoch', 'payload_sha256', 'agent', 'reason', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 7 THEN
        RAISE EXCEPTION 'tollgate_insert_fenced takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'key_epoch', 'active_epoch', 'payload_sha256', 'agent', 'reason', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO fenced (action_key, key_epoch, active_epoch, payload_sha256, agent, reason, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::text, p_vals[6]::text, p_vals[7]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_fenced_reviews(p_cols text[], p_vals text[]) RETURNS public.fenced_reviews
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.fenced_reviews;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['fenced_id', 'operator', 'note', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 4 THEN
        RAISE EXCEPTION 'tollgate_insert_fenced_reviews takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['fenced_id', 'operator', 'note', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO fenced_reviews (fenced_id, operator, note, at_ms) VALUES (p_vals[1]::bigint, p_vals[2]::text, p_vals[3]::text, p_vals[4]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_operators(p_cols text[], p_vals text[]) RETURNS public.operators
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.operators;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['name', 'name_key', 'action', 'public_key', 'fingerprint', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 6 THEN
        RAISE EXCEPTION 'tollgate_insert_operators takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['name', 'name_key', 'action', 'public_key', 'fingerprint', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO operators (name, name_key, action, public_key, fingerprint, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::text, p_vals[6]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_payloads(p_cols text[], p_vals text[]) RETURNS public.payloads
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.payloads;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'payload_sha256', 'canonical', 'redacted', 'kind', 'kind_sha256', 'target_sha256', 'body_sha256', 'agent', 'recorded_ms', 'context_sha256', 'context']::text[] OR cardinality(p_vals) IS DISTINCT FROM 12 THEN
        RAISE EXCEPTION 'tollgate_insert_payloads takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'payload_sha256', 'canonical', 'redacted', 'kind', 'kind_sha256', 'target_sha256', 'body_sha256', 'agent', 'recorded_ms', 'context_sha256', 'context']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO tollgate_private.payloads (action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::bigint, p_vals[5]::text, p_vals[6]::text, p_vals[7]::text, p_vals[8]::text, p_vals[9]::text, p_vals[10]::bigint, p_vals[11]::text, p_vals[12]::text) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_permit_attempts(p_cols text[], p_vals text[]) RETURNS public.permit_attempts
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.permit_attempts;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'permit_id', 'agent', 'attempt_sha256', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 5 THEN
        RAISE EXCEPTION 'tollgate_insert_permit_attempts takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'permit_id', 'agent', 'attempt_sha256', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO permit_attempts (action_key, permit_id, agent, attempt_sha256, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_permits(p_cols text[], p_vals text[]) RETURNS public.permits
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.permits;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'permit_id', 'agent', 'issued_ms', 'lease_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 5 THEN
        RAISE EXCEPTION 'tollgate_insert_permits takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'permit_id', 'agent', 'issued_ms', 'lease_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO permits (action_key, permit_id, agent, issued_ms, lease_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::bigint, p_vals[5]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_policy_evals(p_cols text[], p_vals text[]) RETURNS public.policy_evals
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.policy_evals;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'mode', 'ttl_ms', 'rule_id', 'pattern', 'at_ms', 'approvers', 'explain']::text[] OR cardinality(p_vals) IS DISTINCT FROM 8 THEN
        RAISE EXCEPTION 'tollgate_insert_policy_evals takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'mode', 'ttl_ms', 'rule_id', 'pattern', 'at_ms', 'approvers', 'explain']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO policy_evals (action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::bigint, p_vals[4]::bigint, p_vals[5]::text, p_vals[6]::bigint, p_vals[7]::bigint, p_vals[8]::text) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_policy_rules(p_cols text[], p_vals text[]) RETURNS public.policy_rules
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.policy_rules;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['pattern', 'mode', 'ttl_ms', 'operator', 'set_ms', 'approvers', 'condition', 'priority']::text[] OR cardinality(p_vals) IS DISTINCT FROM 8 THEN
        RAISE EXCEPTION 'tollgate_insert_policy_rules takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['pattern', 'mode', 'ttl_ms', 'operator', 'set_ms', 'approvers', 'condition', 'priority']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO policy_rules (pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::bigint, p_vals[4]::text, p_vals[5]::bigint, p_vals[6]::bigint, p_vals[7]::text, p_vals[8]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_principal_names(p_cols text[], p_vals text[]) RETURNS public.principal_names
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.principal_names;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['who', 'who_key', 'agent', 'agent_key', 'action', 'operator', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 7 THEN
        RAISE EXCEPTION 'tollgate_insert_principal_names takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['who', 'who_key', 'agent', 'agent_key', 'action', 'operator', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO principal_names (who, who_key, agent, agent_key, action, operator, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::text, p_vals[6]::text, p_vals[7]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_reconciliations(p_cols text[], p_vals text[]) RETURNS public.reconciliations
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.reconciliations;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'result', 'operator', 'note', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 5 THEN
        RAISE EXCEPTION 'tollgate_insert_reconciliations takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'result', 'operator', 'note', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO reconciliations (action_key, result, operator, note, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_report_refusals(p_cols text[], p_vals text[]) RETURNS public.report_refusals
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.report_refusals;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'permit_id', 'outcome', 'ref', 'latency_ms', 'rule', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 7 THEN
        RAISE EXCEPTION 'tollgate_insert_report_refusals takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'permit_id', 'outcome', 'ref', 'latency_ms', 'rule', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO report_refusals (action_key, permit_id, outcome, ref, latency_ms, rule, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::bigint, p_vals[6]::text, p_vals[7]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_reports(p_cols text[], p_vals text[]) RETURNS public.reports
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.reports;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'permit_id', 'outcome', 'ref', 'latency_ms', 'kind', 'at_ms', 'result']::text[] OR cardinality(p_vals) IS DISTINCT FROM 8 THEN
        RAISE EXCEPTION 'tollgate_insert_reports takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'permit_id', 'outcome', 'ref', 'latency_ms', 'kind', 'at_ms', 'result']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO reports (action_key, permit_id, outcome, ref, latency_ms, kind, at_ms, result) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::bigint, p_vals[6]::text, p_vals[7]::bigint, p_vals[8]::text) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_set_aside(p_cols text[], p_vals text[]) RETURNS public.set_aside
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.set_aside;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'fact_table', 'row_json', 'operator', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 5 THEN
        RAISE EXCEPTION 'tollgate_insert_set_aside takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'fact_table', 'row_json', 'operator', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO set_aside (action_key, fact_table, row_json, operator, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_signatures(p_cols text[], p_vals text[]) RETURNS public.signatures
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.signatures;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['fact_table', 'fact_row', 'fingerprint', 'signed_ms', 'signature', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 6 THEN
        RAISE EXCEPTION 'tollgate_insert_signatures takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['fact_table', 'fact_row', 'fingerprint', 'signed_ms', 'signature', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO signatures (fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::bigint, p_vals[5]::bytea, p_vals[6]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

CREATE FUNCTION public.tollgate_insert_votes(p_cols text[], p_vals text[]) RETURNS public.votes
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    r public.votes;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY['action_key', 'decision', 'operator', 'name_key', 'reason', 'at_ms']::text[] OR cardinality(p_vals) IS DISTINCT FROM 6 THEN
        RAISE EXCEPTION 'tollgate_insert_votes takes the columns %, in that order (the database numbers rows and names their writer), not %',
            ARRAY['action_key', 'decision', 'operator', 'name_key', 'reason', 'at_ms']::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO votes (action_key, decision, operator, name_key, reason, at_ms) VALUES (p_vals[1]::text, p_vals[2]::text, p_vals[3]::text, p_vals[4]::text, p_vals[5]::text, p_vals[6]::bigint) RETURNING * INTO r;
    RETURN r;
END $$;

-- Schema 25: an operator's ledger-wide change waits for the chain head
-- under the same half-second bound as for the ledger-wide lock, and names
-- who holds it (TestPostgresGuardHoleAgentHoldsChainHead).
--
-- tollgate_seal is granted to agents: it seals pending events into the
-- chain and holds the head's row until its transaction ends. An agent's
-- role that called it in a transaction it left open made every
-- operator's decision wait for the head with no bound of ours (the
-- client's attempt ran out: "read the chain head: timeout", naming no
-- one), and the waiting decision held the ledger-wide lock exclusively,
-- so every guard queued behind it. Now the head's wait is bounded too:
-- after half a second the change gives up (55P03), its subtransaction
-- lets go of the ledger-wide lock so the guards queued behind it go on
-- (a guard commits its events pending when the head is busy, schema 16),
-- and the message names the head's holder (the transaction whose id is
-- the row's lock), which an operator can end with pg_terminate_backend.
CREATE FUNCTION public.tollgate_lock_head(OUT o_seq bigint, OUT o_hash text) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_prev text := current_setting('lock_timeout');
    v_what text := 'the ledger-wide lock';
    v_holders text;
BEGIN
    BEGIN
        -- The caller's own bound when it is shorter (its attempt's time).
        IF v_prev IN ('0', '') OR v_prev::interval > interval '500 ms' THEN
            PERFORM set_config('lock_timeout', '500ms', true);
        END IF;
        LOCK TABLE tollgate_private.ledger_gate IN EXCLUSIVE MODE;
        v_what := 'the chain head';
        SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1 FOR UPDATE;
        PERFORM set_config('lock_timeout', v_prev, true);
    EXCEPTION WHEN lock_not_available THEN
        IF v_what = 'the chain head' THEN
            -- A row lock shows in pg_locks only as its holder's
            -- transaction id, which is the row's xmax.
            SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
                FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
                    AND l.transactionid::text = (SELECT h.xmax::text FROM chain_head h WHERE h.one = 1)
                    AND l.pid <> pg_backend_pid();
        ELSE
            SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
                FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'relation' AND l.relation = 'tollgate_private.ledger_gate'::regclass
                    AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                    AND l.mode <> 'AccessShareLock' AND l.granted AND l.pid <> pg_backend_pid();
        END IF;
        RAISE EXCEPTION '% is held by %; a change of rules, operators, epochs or decisions waits for it', v_what, coalesce(v_holders, 'another session')
            USING ERRCODE = 'lock_not_available';
    END;
    PERFORM tollgate_private.seal_pending();
    SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1;
END $$;

CREATE FUNCTION public.tollgate_lock_key(p_logical text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    LOCK TABLE tollgate_private.ledger_gate IN ROW SHARE MODE;
    IF tollgate_private.others_key(p_logical) IS NOT NULL THEN
        -- Another role's key: the gate, not the key's lock.
        RETURN NULL;
    END IF;
    -- The lock at once when it is free, as almost always; the bounded
    -- wait, which pays for a subtransaction, only when it is not.
    IF NOT pg_try_advisory_xact_lock(1953459309, hashtext(p_logical)) THEN
        PERFORM tollgate_private.lock_key(p_logical);
    END IF;
    IF tollgate_private.others_key(p_logical) IS NOT NULL THEN
        RAISE EXCEPTION 'tollgate_lock_key: the key % was recorded by another role while this call waited for its lock; an agent''s role locks only its own keys and new ones', p_logical
            USING ERRCODE = 'serialization_failure';
    END IF;
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

-- One insert function per fact table, tollgate_insert_<table>(cols,
-- vals): SECURITY DEFINER, search_path pinned, a static INSERT (planned
-- once per session, as fast as the INSERT it replaces) of the row whose
-- values come as text, cast to each column's type, returning the row as
-- stored, so the state machine hashes exactly what verify will read back.
-- It takes every column but those the database fills itself (an identity
-- and db_role), in the table's order, and refuses any other list: a role
-- cannot choose a row's number or claim another writer. Which role may
-- write which fact is which of these functions it may execute.
-- tollgate_make_insert_fact writes one from the catalog; a later
-- migration that adds a column to a fact table calls it again.
CREATE FUNCTION public.tollgate_make_insert_fact(p_table text, p_roles text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'public', 'pg_temp'
    AS $_$
DECLARE
    v_target regclass := coalesce(to_regclass('tollgate_private.' || quote_ident(p_table)), ('public.' || quote_ident(p_table))::regclass);
    v_fn text := 'tollgate_insert_' || p_table;
    v_names text;
    v_cols text;
    v_vals text;
    v_n bigint;
BEGIN
    SELECT string_agg(quote_literal(a.attname), ', ' ORDER BY a.attnum), string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
           string_agg(format('p_vals[%s]::%s', a.n, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum), count(*)
        INTO v_names, v_cols, v_vals, v_n
        FROM (SELECT x.attname, x.attnum, x.atttypid, x.atttypmod, row_number() OVER (ORDER BY x.attnum) AS n FROM pg_attribute x
              WHERE x.attrelid = v_target AND x.attnum > 0 AND NOT x.attisdropped AND x.attidentity = '' AND x.attname <> 'db_role') a;
    EXECUTE format($f$CREATE OR REPLACE FUNCTION public.%I(p_cols text[], p_vals text[]) RETURNS public.%I
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
DECLARE
    r public.%I;
BEGIN
    IF p_cols IS DISTINCT FROM ARRAY[%s]::text[] OR cardinality(p_vals) IS DISTINCT FROM %s THEN
        RAISE EXCEPTION '%s takes the columns %%, in that order (the database numbers rows and names their writer), not %%',
            ARRAY[%s]::text[], p_cols USING ERRCODE = '42703';
    END IF;
    INSERT INTO %s (%s) VALUES (%s) RETURNING * INTO r;
    RETURN r;
END $fn$$f$, v_fn, p_table, p_table, v_names, v_n, v_fn, v_names, v_target, v_cols, v_vals);
    EXECUTE format('REVOKE ALL ON FUNCTION public.%I(text[], text[]) FROM PUBLIC', v_fn);
    EXECUTE format('GRANT EXECUTE ON FUNCTION public.%I(text[], text[]) TO %s', v_fn, p_roles);
END $_$;

-- An agent's name as the client takes it (approvals.CheckName, SPEC 4):
-- at most 200 bytes, no control (Cc) or format (Cf) character, no line
-- or paragraph separator. The class is Go's unicode.Cc and unicode.Cf
-- (Unicode 15), which TestPostgresAgentNameRuleIsGos compares.
CREATE FUNCTION public.tollgate_name_ok(p text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT octet_length(p) <= 200 AND p !~ '[\U00000001-\U0000001F\U0000007F-\U0000009F\U000000AD\U00000600-\U00000605\U0000061C\U000006DD\U0000070F\U00000890-\U00000891\U000008E2\U0000180E\U0000200B-\U0000200F\U0000202A-\U0000202E\U00002060-\U00002064\U00002066-\U0000206F\U0000FEFF\U0000FFF9-\U0000FFFB\U000110BD\U000110CD\U00013430-\U0001343F\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0001\U000E0020-\U000E007F\U00002028\U00002029]'
$$;

-- Commits wake the console and watch (SPEC 8): the payload is the key only.
CREATE FUNCTION public.tollgate_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('tollgate', NEW.action_key);
    RETURN NULL;
END $$;

-- Whether a kind pattern (an exact kind, or a glob of * and ?) matches.
CREATE FUNCTION public.tollgate_pattern_matches(p_pattern text, p_kind text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT p_pattern = p_kind OR (p_pattern ~ '[*?]' AND p_kind LIKE
        replace(replace(replace(replace(replace(p_pattern, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%'), '?', '_') COLLATE "C")
$$;

-- A pattern's specificity (approvals.specificity): an exact kind first,
-- then globs by their count of literal bytes.
CREATE FUNCTION public.tollgate_pattern_specificity(p_pattern text) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN p_pattern !~ '[*?]' THEN 1048576
        ELSE octet_length(p_pattern) - length(p_pattern) + length(replace(replace(p_pattern, '*', ''), '?', '')) END
$$;

-- A pending event is never changed; it leaves the table only sealed.
CREATE FUNCTION public.tollgate_pending_kept() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF TG_OP = 'DELETE' AND tollgate_sealing() THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'pending_events: an event leaves it only by being sealed into the chain' USING ERRCODE = 'TG001';
END $$;

CREATE FUNCTION public.tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) RETURNS record
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $$
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern FROM tollgate_policy_decide(p_kind, p_target, p_agent, p_context, NULL::text, p_at_ms) d
$$;

CREATE FUNCTION public.tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $$
DECLARE
    v_now bigint;
    v_mode text;
    v_rule bigint;
    v_ttl bigint;
    v_approvers bigint;
    v_pattern text;
BEGIN
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern INTO o_mode, o_rule, o_ttl_ms, o_approvers, o_pattern
        FROM tollgate_private.policy_decide_at(p_kind, p_target, p_agent, p_context, p_body, p_at_ms) d;
    v_now := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    IF abs(v_now - p_at_ms) <= 1000 OR tollgate_clock_ok(0) OR tollgate_copying() THEN
        RETURN;
    END IF;
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern INTO v_mode, v_rule, v_ttl, v_approvers, v_pattern
        FROM tollgate_private.policy_decide_at(p_kind, p_target, p_agent, p_context, p_body, v_now) d;
    IF (v_mode, v_rule, v_ttl, v_approvers, v_pattern) IS DISTINCT FROM (o_mode, o_rule, o_ttl_ms, o_approvers, o_pattern) THEN
        RAISE EXCEPTION 'the rules decide kind % otherwise at the database''s time than at the client''s (% ms apart): the database''s clock judges (SPEC 8); retry once the client''s clock agrees',
            p_kind, v_now - p_at_ms USING ERRCODE = 'serialization_failure';
    END IF;
END $$;

-- A string as Python's json.dumps(ensure_ascii=True) writes it, which is
-- what the canonical text is (ledger/payload.go appendPyString):
-- PostgreSQL's JSON escaping is Python's for quotes, backslashes and
-- the characters below U+0020 (\b \f \n \r \t, the rest \u00XX in lower
-- case), and writes everything else raw; Python escapes DEL and every
-- non-ASCII character as \uXXXX, beyond U+FFFF as a surrogate pair.
CREATE FUNCTION public.tollgate_py_string(p text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
DECLARE
    t text := to_json(p)::text;
BEGIN
    IF t !~ '[^ -~]' THEN
        RETURN t;
    END IF;
    RETURN string_agg(CASE
            WHEN c ~ '^[ -~]$' THEN c
            WHEN ascii(c) > 65535 THEN '\u' || lpad(to_hex(55296 + ((ascii(c) - 65536) >> 10)), 4, '0')
                || '\u' || lpad(to_hex(56320 + ((ascii(c) - 65536) & 1023)), 4, '0')
            ELSE '\u' || lpad(to_hex(ascii(c)), 4, '0') END, '' ORDER BY n)
        FROM regexp_split_to_table(t, '') WITH ORDINALITY AS x(c, n);
END $_$;

-- A record of a new key in one call: the guard's first half and its end.
-- o_path is 'new' when it recorded the key (o_unsealed as the guard's),
-- 'full' when it wrote nothing and the client's path decides.
CREATE FUNCTION public.tollgate_record(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $$
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

-- The functions every guard calls, in PL/pgSQL rather than SQL: a SQL
-- function's body is parsed and planned again on every call, a PL/pgSQL
-- function's statements once per session (BenchmarkPostgresAgents; issue
-- 25). tollgate_refresh_index is made anew by the state machine's step of
-- this migration (its text lives in package ledger). Same results, same
-- grants (CREATE OR REPLACE keeps them).
CREATE FUNCTION public.tollgate_record_intent(p_key text, p_sha256 text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    INSERT INTO intents VALUES (p_key, p_sha256, 'recorded') ON CONFLICT (action_key) DO NOTHING;
END $$;

CREATE FUNCTION public.tollgate_refuse(p_key text, p_msg text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'key %: %', p_key, p_msg USING ERRCODE = 'TG002';
END $$;

-- Changed in place since by development schema 39: no agent's role ever
-- locks the chain head (issue 41). (that migration, in the history,
-- says more).
CREATE FUNCTION public.tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $_$
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
    LOCK TABLE tollgate_private.ledger_gate IN ROW SHARE MODE;
    IF NOT pg_try_advisory_xact_lock(1953459309, hashtext(v_logical)) THEN PERFORM tollgate_private.lock_key(v_logical); END IF;
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
    IF tollgate_private.agent_pends() THEN
        PERFORM 1 WHERE false;
    ELSIF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    ELSE
        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE SKIP LOCKED;
    END IF;
    IF FOUND THEN
        PERFORM tollgate_append_event(p_key, 'report_accepted', p_permit_id, v_detail, o_now, 'reports', v_row.id::text, v_hash);
    ELSE
        INSERT INTO pending_events (action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256)
            VALUES (p_key, 'report_accepted', p_permit_id, v_detail, o_now, 'reports', v_row.id::text, v_hash) RETURNING id INTO o_unsealed;
        IF tollgate_agent_only() THEN
            o_unsealed := NULL;
        END IF;
    END IF;
    DELETE FROM tollgate_private.guard_writing WHERE txid = txid_current();
    o_path := 'new';
END $_$;

-- A fact row's SHA-256 (ledger/facts.go rowHash): the table's name and
-- each value, each written as its type tag, its length in bytes, a colon
-- and its text; a NULL is tagged n whatever its column's tag. The caller
-- leaves out an optional column at its default and names a tagged one
-- ('c' and its name) before its value, as rowHash does.
CREATE FUNCTION public.tollgate_row_hash(p_table text, p_tags text[], p_vals text[]) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog'
    AS $$
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

-- Seals what is pending, for a guard that found the head taken (its
-- pending id p_through: nothing to do when that event is sealed
-- already) or for anyone (NULL: all). p_wait_ms bounds the wait for the
-- head (0: none); it waits only on the head, never on a key.
-- Changed in place since by development schema 39: no agent's role ever
-- locks the chain head (issue 41). (that migration, in the history,
-- says more).
CREATE FUNCTION public.tollgate_seal(p_through bigint, p_wait_ms bigint) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pending_events WHERE p_through IS NULL OR id <= p_through) OR tollgate_agent_only() THEN
        RETURN 0;
    END IF;
    IF p_wait_ms > 0 THEN
        PERFORM set_config('lock_timeout', p_wait_ms::text, true);
    END IF;
    PERFORM 1 FROM chain_head WHERE one = 1 FOR UPDATE;
    RETURN tollgate_private.seal_pending();
END $$;

CREATE FUNCTION public.tollgate_sealing() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    SELECT EXISTS (SELECT 1 FROM tollgate_private.sealing WHERE txid = txid_current_if_assigned())
$$;

CREATE FUNCTION public.tollgate_set_condition(p_rule bigint, p_ast text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_cond text;
    v_ast jsonb;
BEGIN
    SELECT condition INTO v_cond FROM policy_rules WHERE id = p_rule;
    IF v_cond IS NULL OR v_cond = '' THEN
        RAISE EXCEPTION 'rule % has no condition to translate', p_rule USING ERRCODE = 'TG002';
    END IF;
    v_ast := p_ast::jsonb;
    IF jsonb_typeof(v_ast) <> 'object' OR v_ast->'v' IS DISTINCT FROM '1'::jsonb OR jsonb_typeof(v_ast->'reads') <> 'array' THEN
        RAISE EXCEPTION 'rule %: not a condition translation of version 1', p_rule USING ERRCODE = 'TG002';
    END IF;
    INSERT INTO policy_conditions VALUES (p_rule, p_ast);
END $$;

CREATE FUNCTION public.tollgate_sha256_hex(p text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT encode(sha256(convert_to(p, 'UTF8')), 'hex')
$$;

-- The SHA-256 of p with each p_mark a NUL (NULL: none). The mark is
-- private-use (U+E0xx, bytes EE 80-83 80-BF): its hex cannot match
-- across two characters of valid UTF-8.
CREATE FUNCTION public.tollgate_sha256_nul(p text, p_mark text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT CASE WHEN p_mark IS NULL THEN encode(sha256(convert_to(p, 'UTF8')), 'hex')
        ELSE encode(sha256(decode(replace(encode(convert_to(p, 'UTF8'), 'hex'), encode(convert_to(p_mark, 'UTF8'), 'hex'), '00'), 'hex')), 'hex') END
$$;

-- Schema 30: an operator's decision waits for the chain head only at its
-- end, under the half-second bound, naming the holder.
--
-- approve, reject and reconcile are not one call (an operator's
-- signature is made over the stored row and checked in Go). Up to here
-- they ran as writes of the whole ledger, which lock the chain head
-- (tollgate_lock_head) before their first read: 15 round trips with the
-- head held for 13, in which no event was sealed and no other operator
-- could decide any key. They now run as key transactions (the key's lock
-- and the ledger-wide lock shared, tollgate_lock_key), and take the head
-- just before appending their events: this function, which waits for the
-- head's row as tollgate_lock_head does (the caller's bound or half a
-- second, whichever is shorter) and, when it cannot have it, names the
-- transaction that holds it (55P03), which an operator can end. A key
-- transaction of a guard or a report waits for the head in
-- tollgate_append_events, as before.
CREATE FUNCTION public.tollgate_wait_head() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_prev text := current_setting('lock_timeout');
    v_holders text;
BEGIN
    BEGIN
        IF v_prev IN ('0', '') OR v_prev::interval > interval '500 ms' THEN
            PERFORM set_config('lock_timeout', '500ms', true);
        END IF;
        PERFORM 1 FROM chain_head WHERE one = 1 FOR UPDATE;
        PERFORM set_config('lock_timeout', v_prev, true);
    EXCEPTION WHEN lock_not_available THEN
        -- A row lock shows in pg_locks only as its holder's transaction
        -- id, which is the row's xmax.
        SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
                AND l.transactionid::text = (SELECT h.xmax::text FROM chain_head h WHERE h.one = 1)
                AND l.pid <> pg_backend_pid();
        RAISE EXCEPTION 'the chain head is held by %; a change of rules, operators, epochs or decisions waits for it', coalesce(v_holders, 'another session')
            USING ERRCODE = 'lock_not_available';
    END;
END $$;

-- Whether a row's xmin is this transaction's (or one of its
-- subtransactions'): a row another transaction has not committed is
-- invisible, so a visible row whose writer is still in progress is this
-- transaction's. The 32-bit xmin is widened with the current epoch.
CREATE FUNCTION public.tollgate_xmin_mine(p_xmin xid) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
    v_cur bigint := txid_current();
    v_full bigint := ((v_cur >> 32) << 32) + p_xmin::text::bigint;
BEGIN
    IF v_full > v_cur + 2147483648 THEN
        v_full := v_full - 4294967296;
    END IF;
    RETURN txid_status(v_full) = 'in progress';
END $$;

-- Whether this session's login role may write facts naming p_agent: its
-- own name, a name an operator allowed it, or any name for the schema
-- owner's members.
CREATE FUNCTION tollgate_private.agent_name_allowed(p_agent text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    RETURN p_agent = session_user
        OR EXISTS (SELECT 1 FROM tollgate_private.agent_names WHERE role = session_user AND agent = p_agent)
        OR pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'MEMBER');
END $$;

-- Whether the calling session's events go pending: true for a role that
-- is neither an operator's nor the schema's owner (tollgate_agent_only),
-- which must then be in READ COMMITTED.
CREATE FUNCTION tollgate_private.agent_pends() RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF NOT tollgate_agent_only() THEN
        RETURN false;
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'an agent''s role writes in READ COMMITTED transactions only: a snapshot taken before the ledger-wide lock may predate a change of rules or epochs (isolation %)',
            current_setting('transaction_isolation') USING ERRCODE = '0A000';
    END IF;
    RETURN true;
END $$;

-- Schema 27: a report's lateness is judged by the database's clock, and
-- the times an agent's facts carry are the database's (SPEC 8: deadlines
-- and leases are judged by the database's clock). Found by the attacking
-- pass (TestPostgresGuardHoleAgentBackdatesReport): a report's time was
-- the client's, checked within 60 s of the database's clock
-- (tollgate_clock_ok), and a report was late only when that time was past
-- the lease; an agent's role that reported after its lease ran out, from
-- a store whose clock ran 21 s slow, was taken as on time, and the key an
-- operator was shown as uncertain read succeeded.
--
-- Honest clients do not need the 60 s: the one-call functions read
-- clock_timestamp(), and the client's key transaction on PostgreSQL
-- reads the database's clock with its locks (Store.beginKey), so a fact's
-- time differs from the database's by the transaction's own latency.
-- Where the bound is on (not lifted for tests on an injected clock, not a
-- copy), two rules, in a trigger of their own that runs before each
-- table's other rules:
--
--  * a report's, a permit's or an approval request's time is within 2 s
--    of the database's clock at its insert (the request's time starts its
--    TTL, the permit's its lease);
--  * a report is accepted (on time) only while the database's clock is
--    before the permit's lease; after it, the report is late evidence.
--
-- The first is refused as any fact against the rules is (TG002, exit 77,
-- nothing stored): a time 2 s off is a clock of the client's own, which
-- retrying does not mend. The second fails with 40001, which clients
-- retry with a new reading of the clock: an honest transaction that read
-- the time just before the lease ran out and inserted its report just
-- after is retried and stores its report as late.
CREATE FUNCTION tollgate_private.at_database_time() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_now bigint;
    v_at bigint;
    v_lease bigint;
BEGIN
    IF tollgate_copying() OR tollgate_clock_ok(0) THEN
        RETURN NEW; -- a copy's times are its source's; tollgate_clock_ok(0) holds only where the bound is lifted
    END IF;
    v_now := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    -- The time column is the trigger's argument: one function for the
    -- three tables, each naming its own column.
    v_at := (to_jsonb(NEW) ->> TG_ARGV[0])::bigint;
    IF abs(v_now - v_at) > 2000 THEN
        PERFORM tollgate_refuse(NEW.action_key, format('%s at %s ms is %s ms from the database''s clock: a fact''s time is the database''s (SPEC 8)',
            TG_ARGV[1], v_at, v_at - v_now));
    END IF;
    -- Read through jsonb: a row of another table has no kind.
    IF TG_TABLE_NAME = 'reports' AND to_jsonb(NEW) ->> 'kind' = 'accepted' THEN
        SELECT lease_ms INTO v_lease FROM permits WHERE action_key = NEW.action_key;
        IF FOUND AND v_now >= v_lease THEN
            RAISE EXCEPTION 'key %: the lease ran out at % ms by the database''s clock (now % ms): a report now is late, not accepted (SPEC 8)',
                NEW.action_key, v_lease, v_now USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION tollgate_private.check_agent_is_role() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF tollgate_copying() OR tollgate_private.agent_name_allowed(NEW.agent) THEN
        RETURN NEW;
    END IF;
    PERFORM tollgate_refuse(NEW.action_key, format('the role %s may not act as agent %s (SPEC 8: an agent''s name is its login role''s unless an operator allows it: tollgate agents allow %s %s)',
        session_user, NEW.agent, session_user, NEW.agent));
    RETURN NULL;
END $$;

CREATE FUNCTION tollgate_private.check_attempt_permit() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF tollgate_copying() OR EXISTS (SELECT 1 FROM permits p WHERE p.action_key = NEW.action_key AND p.permit_id = NEW.permit_id
            AND p.agent = NEW.agent AND tollgate_xmin_mine(p.xmin)) THEN
        RETURN NEW;
    END IF;
    PERFORM tollgate_refuse(NEW.action_key, 'an attempt names a permit its own transaction did not issue to that agent');
    RETURN NULL;
END $$;

CREATE FUNCTION tollgate_private.check_intent_payload() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF tollgate_copying() OR pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'USAGE') THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM tollgate_private.payloads p WHERE p.action_key = NEW.action_key) THEN
        PERFORM tollgate_refuse(NEW.action_key, 'an intent with no payload: a role records a key only with its payload, committed by an event naming its agent (schema 40)');
    END IF;
    RETURN NULL;
END $$;

-- Changed in place since by development schema 39: no agent's role ever
-- locks the chain head (issue 41). (that migration, in the history,
-- says more).
CREATE FUNCTION tollgate_private.key_finish(p_key text, p_target text, p_agent text, p_now bigint, p_types text[], p_details text[], p_tables text[], p_hashes text[]) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'public', 'pg_temp'
    AS $$
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
    IF tollgate_private.agent_pends() THEN
        PERFORM 1 WHERE false;
    ELSIF current_setting('transaction_isolation') <> 'read committed' THEN
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
    RETURN CASE WHEN v_unsealed IS NOT NULL AND tollgate_agent_only() THEN NULL ELSE v_unsealed END;
END $$;

CREATE FUNCTION tollgate_private.key_new(p_fn text, p_key text, p_logical text, p_epoch text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, OUT o_now bigint, OUT o_go boolean) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'public', 'pg_temp'
    AS $_$
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
    IF NOT pg_try_advisory_xact_lock(1953459309, hashtext(p_logical)) THEN PERFORM tollgate_private.lock_key(p_logical); END IF;
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
END $_$;

CREATE FUNCTION tollgate_private.key_parse(p_fn text, p_key text, p_wait_ms bigint, OUT o_logical text, OUT o_epoch text) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'public', 'pg_temp'
    AS $_$
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
END $_$;

CREATE FUNCTION tollgate_private.lock_key(p_logical text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_prev text;
    v_holders text;
BEGIN
    IF pg_try_advisory_xact_lock(1953459309, hashtext(p_logical)) THEN
        RETURN;
    END IF;
    v_prev := current_setting('lock_timeout');
    BEGIN
        -- The caller's own bound when it is shorter (its attempt's time).
        IF v_prev IN ('0', '') OR v_prev::interval > interval '500 ms' THEN
            PERFORM set_config('lock_timeout', '500ms', true);
        END IF;
        PERFORM pg_advisory_xact_lock(1953459309, hashtext(p_logical));
        PERFORM set_config('lock_timeout', v_prev, true);
    EXCEPTION WHEN lock_not_available THEN
        -- A lock of two int4 keys shows its first as classid, its second
        -- (an oid, so unsigned) as objid, with objsubid 2.
        SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.classid = 1953459309::oid
                AND l.objid = (hashtext(p_logical)::bigint & 4294967295)::oid AND l.objsubid = 2
                AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                AND l.granted AND l.pid <> pg_backend_pid();
        RAISE EXCEPTION 'the key % is held by %; its guards, reports and decisions wait for it', p_logical, coalesce(v_holders, 'another session')
            USING ERRCODE = 'lock_not_available';
    END;
END $$;

-- tollgate_private.others_key names the role that recorded a payload of
-- the logical key when that is neither the caller's session role nor
-- unknown (a payload recorded before schema 10), and the caller does not
-- act for the ledger; NULL otherwise. PL/pgSQL keeps its plan for the
-- session (a SQL function with a FROM is planned again on every call:
-- 140 us, against 4 us for the lock itself), and it has no search_path
-- of its own (a SET costs each call too): tollgate_lock_key, its only
-- caller, pins it. tollgate_sees_bodies (40 us) is asked only of a
-- caller who found another role's payload.
CREATE FUNCTION tollgate_private.others_key(p_logical text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    v_role text;
BEGIN
    SELECT p.db_role INTO v_role FROM public.action_index x JOIN tollgate_private.payloads p ON p.action_key = x.action_key
        WHERE x.logical_key = p_logical AND p.db_role <> '' AND p.db_role <> session_user LIMIT 1;
    IF v_role IS NULL OR public.tollgate_sees_bodies() THEN
        RETURN NULL;
    END IF;
    RETURN v_role;
END $$;

-- Without a body (the one-call guard decides only kinds no conditional
-- rule matches).
CREATE FUNCTION tollgate_private.policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) RETURNS record
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $$
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern FROM tollgate_private.policy_decide_at(p_kind, p_target, p_agent, p_context, NULL, p_at_ms) d
$$;

-- Without a body (the one-call guard decides only kinds no conditional
-- rule matches).
CREATE FUNCTION tollgate_private.policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET extra_float_digits TO '3'
    SET timezone_abbreviations TO 'Default'
    SET "TimeZone" TO 'UTC'
    SET "DateStyle" TO 'ISO, MDY'
    SET "IntervalStyle" TO 'postgres'
    SET lc_numeric TO 'C'
    SET standard_conforming_strings TO 'on'
    AS $$
DECLARE
    v_id bigint;
    v_pattern text;
    v_mode text;
    v_ttl bigint;
    v_approvers bigint;
    v_condition text;
    v_ast text;
    v_ctx jsonb := tollgate_cel_context(CASE WHEN coalesce(p_context, '') = '' THEN '{}'::jsonb ELSE p_context::jsonb END);
    v_act jsonb := tollgate_cel_action(p_kind, p_target, p_agent, p_body);
    v_signed boolean := EXISTS (SELECT 1 FROM operators);
    v_holds boolean;
    v_failed boolean := false;
    v_ended boolean := false;
    v_rank bigint;
    v_best bigint := -1;
BEGIN
    FOR v_id, v_pattern, v_mode, v_ttl, v_approvers, v_condition, v_ast IN SELECT p.id, p.pattern, p.mode, p.ttl_ms, p.approvers, p.condition, c.ast
        FROM policy_rules p LEFT JOIN policy_conditions c ON c.rule_id = p.id
        WHERE p.id IN (SELECT max(id) FROM policy_rules GROUP BY pattern, condition)
          AND tollgate_pattern_matches(p.pattern, p_kind)
          AND (NOT v_signed OR EXISTS (SELECT 1 FROM signatures s WHERE s.fact_table = 'policy_rules' AND s.fact_row = p.id::text))
        ORDER BY p.priority DESC, tollgate_pattern_specificity(p.pattern) DESC, (p.condition <> '') DESC, p.id
    LOOP
        IF NOT v_failed AND v_condition <> '' THEN
            IF v_ast IS NULL THEN
                RAISE EXCEPTION 'rule % has a condition the database has no translation of: set it again with this tollgate', v_id USING ERRCODE = 'TG002';
            END IF;
            v_holds := tollgate_condition_holds_cel(v_ast::jsonb, v_ctx, v_act, p_at_ms::numeric * 1000000);
            IF v_holds IS NULL THEN
                v_failed := true;
            ELSIF NOT v_holds THEN
                CONTINUE;
            END IF;
        END IF;
        v_rank := CASE v_mode WHEN 'deny' THEN 1024 WHEN 'approval' THEN 1 + greatest(v_approvers, 1) ELSE 0 END;
        IF v_rank > v_best THEN
            v_best := v_rank;
            o_mode := v_mode;
            o_rule := v_id;
            o_ttl_ms := CASE WHEN v_mode = 'approval' AND v_ttl <= 0 THEN 86400000 ELSE v_ttl END;
            o_approvers := greatest(v_approvers, 1);
            o_pattern := v_pattern;
        END IF;
        IF NOT v_failed THEN
            RETURN;
        END IF;
        IF v_condition = '' THEN
            v_ended := true;
            EXIT;
        END IF;
    END LOOP;
    IF v_failed AND (v_ended OR v_best >= 2) THEN
        RETURN;
    END IF;
    o_mode := 'approval';
    o_rule := NULL;
    o_ttl_ms := 86400000;
    o_approvers := 1;
    o_pattern := '(no rule matches)';
END $$;

CREATE FUNCTION tollgate_private.record_write(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_now bigint, OUT o_types text[], OUT o_details text[], OUT o_tables text[], OUT o_hashes text[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'public', 'pg_temp'
    AS $$
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

-- The one-call functions (tollgate_guard and tollgate_record through
-- key_finish, tollgate_report) take the head only when it is free and
-- the caller is not an agent's role; an agent's call commits its events
-- pending and answers no pending id (o_unsealed NULL), since it could
-- not seal them. Their latest text is read back from the catalog, as
-- schema 23 did, and each replaced statement must occur exactly once.
-- Replaces, in the latest text of function fn as the catalog holds it,
-- the statement old, which must occur exactly once, with new, and
-- re-creates the function (CREATE OR REPLACE keeps its grants). A
-- migration that changes one statement of a long function uses it rather
-- than copying the function; schema names the migration in its error.
CREATE FUNCTION tollgate_private.replace_in_function(p_schema integer, p_fn regprocedure, p_old text, p_new text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_def text := pg_get_functiondef(p_fn);
BEGIN
    IF (length(v_def) - length(replace(v_def, p_old, ''))) <> length(p_old) THEN
        RAISE EXCEPTION 'schema %: % does not hold, once, the statement the previous schema wrote: %', p_schema, p_fn, p_old;
    END IF;
    EXECUTE replace(v_def, p_old, p_new);
END $$;

-- Appends every pending event this transaction sees to the chain, in
-- pending-id order, and moves the head once: the caller holds the head
-- (or this takes it, waiting). Returns how many it sealed.
CREATE FUNCTION tollgate_private.seal_pending() RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_seq bigint;
    v_hash text;
    v_prev text;
    v_ids bigint[] := '{}';
    p record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pending_events) THEN
        RETURN 0;
    END IF;
    SELECT h.seq, h.hash INTO v_seq, v_hash FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    INSERT INTO tollgate_private.sealing VALUES (txid_current()) ON CONFLICT DO NOTHING;
    FOR p IN SELECT * FROM pending_events ORDER BY id LOOP
        v_prev := v_hash;
        v_seq := v_seq + 1;
        v_hash := tollgate_event_hash(v_prev, v_seq, p.action_key, p.type, p.actor, p.detail, p.at_ms, p.fact_table, p.fact_row, p.fact_sha256);
        INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv)
            VALUES (v_seq, p.action_key, p.type, p.actor, p.detail, p.at_ms, v_prev, v_hash, p.fact_table, p.fact_row, p.fact_sha256, 2);
        v_ids := v_ids || p.id;
    END LOOP;
    IF cardinality(v_ids) > 0 THEN
        DELETE FROM pending_events WHERE id = ANY (v_ids);
        UPDATE chain_head SET seq = v_seq, hash = v_hash WHERE one = 1;
    END IF;
    DELETE FROM tollgate_private.sealing WHERE txid = txid_current();
    RETURN cardinality(v_ids);
END $$;

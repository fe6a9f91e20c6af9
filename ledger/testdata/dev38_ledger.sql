-- A ledger at PostgreSQL's last development schema (38): the SQLite
-- ledger dev20_ledger.sql copied by that build (migrate --from), dumped
-- by pg_dump --inserts --no-owner. Generated, never edited.
--
-- PostgreSQL database dump
--

\restrict CWzff0bGACWOTWZN4sJHHcnu5KDezxryqRhfGKagxUXbJxyYEuVzMNjxKTZuiZO

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: tollgate_private; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA tollgate_private;


--
-- Name: tollgate_action_body(text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_action_target(text, text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_agent_allow(text, text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_agent_names(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_agent_names() RETURNS TABLE(role text, agent text, added_by text, added_ms bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    SELECT a.role, a.agent, a.added_by, a.added_ms FROM tollgate_private.agent_names a ORDER BY a.role, a.agent
$$;


--
-- Name: tollgate_agent_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_agent_only() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    SELECT NOT pg_has_role(session_user, 'tollgate_operator', 'USAGE')
        AND NOT pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'USAGE')
$$;


--
-- Name: tollgate_agent_revoke(text, text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_append_event(text, text, text, text, bigint, text, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint, p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text) RETURNS record
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
DECLARE
    v_prev text;
BEGIN
    PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    PERFORM tollgate_private.seal_pending();
    SELECT h.seq + 1, h.hash INTO o_seq, v_prev FROM chain_head h WHERE h.one = 1;
    o_hash := tollgate_event_hash(v_prev, o_seq, p_key, p_type, p_actor, p_detail, p_at, p_fact_table, p_fact_row, p_fact_sha256);
    INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv)
        VALUES (o_seq, p_key, p_type, p_actor, p_detail, p_at, v_prev, o_hash, p_fact_table, p_fact_row, p_fact_sha256, 2);
    UPDATE chain_head SET seq = o_seq, hash = o_hash WHERE one = 1;
END $$;


--
-- Name: tollgate_append_events(text[], text[], text[], text[], bigint[], text[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'TG001';
END $$;


--
-- Name: tollgate_cel_action(text, text, text, text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_arith(text, jsonb, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_body_of(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_body_path(jsonb, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_cmp(jsonb, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_context(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_d(double precision); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_cel_d(x double precision) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT jsonb_build_array('d', to_jsonb(x)) $$;


--
-- Name: tollgate_cel_eq(jsonb, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_err(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_cel_err(p_msg text) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT jsonb_build_array('e', p_msg) $$;


--
-- Name: tollgate_cel_eval(jsonb, jsonb, jsonb, numeric); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_f8(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_cel_f8(p jsonb) RETURNS double precision
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT (p ->> 1)::float8 $$;


--
-- Name: tollgate_cel_getter(text, jsonb, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_of(jsonb); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_cel_timestamp(text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_check_agent_name(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_check_approval_request(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_check_event(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_check_fact_committed(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_check_payload_row(); Type: FUNCTION; Schema: public; Owner: -
--

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
    v_text text := NEW.canonical;
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
    ELSIF NEW.canonical IS NOT NULL THEN
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
            ELSIF NEW.payload_sha256 IS DISTINCT FROM tollgate_sha256_hex(NEW.canonical) THEN
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
    RETURN NEW;
END $$;


--
-- Name: tollgate_check_permit(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_check_policy_eval(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_check_report(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_clock_ok(bigint); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_condition_holds(jsonb, jsonb, jsonb, numeric); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_condition_holds_cel(jsonb, jsonb, jsonb, numeric); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_context_canonical(text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_copying(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_copying() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    SELECT coalesce(current_setting('tollgate.copying', true), '') = 'on'
        AND pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'MEMBER')
$$;


--
-- Name: tollgate_drop_forged_vote(bigint); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_event_hash(text, bigint, text, text, text, text, bigint, text, text, text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_fact_hash(text, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_flush(boolean, text[], text[], text[], text[], bigint[], text[], text[], text[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_go_json(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_go_json(p text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog'
    AS $$
BEGIN
    RETURN replace(replace(replace(replace(replace(to_json(p)::text,
        '<', '\u003c'), '>', '\u003e'), '&', '\u0026'), U&'\2028', '\u2028'), U&'\2029', '\u2029');
END $$;


--
-- Name: tollgate_go_number(double precision); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint) RETURNS record
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
END $_$;


--
-- Name: tollgate_guard_writing(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_guard_writing() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM tollgate_private.guard_writing WHERE txid = txid_current_if_assigned());
END $$;


--
-- Name: tollgate_head_forward(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_head_forward() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP <> 'UPDATE' OR NEW.one <> OLD.one OR NEW.seq <= OLD.seq THEN
        RAISE EXCEPTION 'the chain head only moves forward' USING ERRCODE = 'TG001';
    END IF;
    RETURN NEW;
END $$;


--
-- Name: tollgate_index_intent(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_index_intent() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
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

--
-- Name: agent_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agent_tokens (
    id bigint NOT NULL,
    token_id text NOT NULL COLLATE pg_catalog."C",
    action text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    name_key text NOT NULL COLLATE pg_catalog."C",
    scope text NOT NULL COLLATE pg_catalog."C",
    digest text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT agent_tokens_action_check CHECK ((action = ANY (ARRAY['create'::text, 'revoke'::text]))),
    CONSTRAINT agent_tokens_check CHECK ((((action = 'create'::text) AND (digest ~ '^[0-9a-f]{64}$'::text)) OR ((action = 'revoke'::text) AND (digest = ''::text)))),
    CONSTRAINT agent_tokens_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT agent_tokens_name_key_check CHECK ((length(name_key) > 0)),
    CONSTRAINT agent_tokens_operator_check CHECK ((length(operator) > 0)),
    CONSTRAINT agent_tokens_scope_check CHECK ((scope = ANY (ARRAY['agent'::text, 'operator'::text]))),
    CONSTRAINT agent_tokens_token_id_check CHECK ((token_id ~ '^[0-9a-f]{16}$'::text))
);


--
-- Name: tollgate_insert_agent_tokens(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: approval_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.approval_requests (
    action_key text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    requested_ms bigint NOT NULL,
    expires_ms bigint NOT NULL,
    CONSTRAINT approval_requests_check CHECK ((expires_ms > requested_ms))
);


--
-- Name: tollgate_insert_approval_requests(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: archives; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.archives (
    id bigint NOT NULL,
    file text NOT NULL COLLATE pg_catalog."C",
    ledger_id text NOT NULL COLLATE pg_catalog."C",
    through_seq bigint NOT NULL,
    through_hash text NOT NULL COLLATE pg_catalog."C",
    head_seq bigint NOT NULL,
    head_hash text NOT NULL COLLATE pg_catalog."C",
    keys bigint NOT NULL,
    keys_sha256 text NOT NULL COLLATE pg_catalog."C",
    spans bigint NOT NULL,
    spans_sha256 text NOT NULL COLLATE pg_catalog."C",
    settled_before_ms bigint NOT NULL,
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT archives_file_check CHECK (((length(file) >= 1) AND (length(file) <= 4096))),
    CONSTRAINT archives_head_hash_check CHECK ((head_hash ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT archives_keys_check CHECK ((keys >= 0)),
    CONSTRAINT archives_keys_sha256_check CHECK ((keys_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT archives_spans_check CHECK ((spans >= 0)),
    CONSTRAINT archives_spans_sha256_check CHECK ((spans_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT archives_through_hash_check CHECK ((through_hash ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT archives_through_seq_check CHECK ((through_seq >= 0))
);


--
-- Name: tollgate_insert_archives(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: conflict_reviews; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.conflict_reviews (
    conflict_id bigint NOT NULL,
    operator text NOT NULL COLLATE pg_catalog."C",
    note text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT conflict_reviews_operator_check CHECK ((length(operator) > 0))
);


--
-- Name: tollgate_insert_conflict_reviews(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_sees_bodies(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_sees_bodies() RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT pg_has_role(session_user, 'tollgate_operator', 'USAGE')
        OR pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'USAGE')
$$;


--
-- Name: conflicts; Type: TABLE; Schema: tollgate_private; Owner: -
--

CREATE TABLE tollgate_private.conflicts (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    stored_sha256 text NOT NULL COLLATE pg_catalog."C",
    attempted_sha256 text NOT NULL COLLATE pg_catalog."C",
    attempted text,
    redacted bigint NOT NULL,
    differs text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT conflicts_attempted_sha256_check CHECK ((attempted_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT conflicts_redacted_check CHECK ((redacted = ANY (ARRAY[(0)::bigint, (1)::bigint]))),
    CONSTRAINT conflicts_stored_sha256_check CHECK ((length(stored_sha256) = 64))
);


--
-- Name: conflicts; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.conflicts AS
 SELECT c.id,
    c.action_key,
    c.stored_sha256,
    c.attempted_sha256,
        CASE
            WHEN ((c.db_role = SESSION_USER) OR ( SELECT public.tollgate_sees_bodies() AS tollgate_sees_bodies)) THEN c.attempted
            ELSE NULL::text
        END AS attempted,
    c.redacted,
    c.differs,
    c.agent,
    c.at_ms,
    c.db_role
   FROM tollgate_private.conflicts c;


--
-- Name: tollgate_insert_conflicts(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: decisions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.decisions (
    action_key text NOT NULL COLLATE pg_catalog."C",
    decision text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    reason text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT decisions_check CHECK (((decision = 'approved'::text) OR (length(reason) > 0))),
    CONSTRAINT decisions_decision_check CHECK ((decision = ANY (ARRAY['approved'::text, 'rejected'::text]))),
    CONSTRAINT decisions_operator_check CHECK ((length(operator) > 0))
);


--
-- Name: tollgate_insert_decisions(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: epochs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.epochs (
    seq bigint NOT NULL,
    epoch text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT epochs_epoch_check CHECK ((length(epoch) = 36))
);


--
-- Name: tollgate_insert_epochs(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: fenced; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.fenced (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    key_epoch text NOT NULL COLLATE pg_catalog."C",
    active_epoch text NOT NULL COLLATE pg_catalog."C",
    payload_sha256 text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    reason text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT fenced_payload_sha256_check CHECK ((length(payload_sha256) = 64))
);


--
-- Name: tollgate_insert_fenced(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: fenced_reviews; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.fenced_reviews (
    fenced_id bigint NOT NULL,
    operator text NOT NULL COLLATE pg_catalog."C",
    note text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT fenced_reviews_operator_check CHECK ((length(operator) > 0))
);


--
-- Name: tollgate_insert_fenced_reviews(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: operators; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operators (
    id bigint NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    name_key text NOT NULL COLLATE pg_catalog."C",
    action text NOT NULL COLLATE pg_catalog."C",
    public_key text NOT NULL COLLATE pg_catalog."C",
    fingerprint text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT operators_action_check CHECK ((action = ANY (ARRAY['add'::text, 'remove'::text]))),
    CONSTRAINT operators_fingerprint_check CHECK ((fingerprint ~~ 'SHA256:%'::text)),
    CONSTRAINT operators_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT operators_name_key_check CHECK ((length(name_key) > 0))
);


--
-- Name: tollgate_insert_operators(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: payloads; Type: TABLE; Schema: tollgate_private; Owner: -
--

CREATE TABLE tollgate_private.payloads (
    action_key text NOT NULL COLLATE pg_catalog."C",
    payload_sha256 text NOT NULL COLLATE pg_catalog."C",
    canonical text COLLATE pg_catalog."C",
    redacted bigint NOT NULL,
    kind text NOT NULL COLLATE pg_catalog."C",
    kind_sha256 text NOT NULL COLLATE pg_catalog."C",
    target_sha256 text NOT NULL COLLATE pg_catalog."C",
    body_sha256 text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    recorded_ms bigint NOT NULL,
    context_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    context text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT payloads_body_sha256_check CHECK ((length(body_sha256) = 64)),
    CONSTRAINT payloads_canonical_check CHECK (((canonical IS NULL) OR (length(canonical) >= 30))),
    CONSTRAINT payloads_check CHECK (((redacted = 1) = (canonical IS NULL))),
    CONSTRAINT payloads_context_check CHECK ((length(context) <= 8192)),
    CONSTRAINT payloads_context_sha256_check CHECK (((context_sha256 = ''::text) OR (context_sha256 ~ '^[0-9a-f]{64}$'::text))),
    CONSTRAINT payloads_kind_sha256_check CHECK ((length(kind_sha256) = 64)),
    CONSTRAINT payloads_payload_sha256_check CHECK ((payload_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT payloads_redacted_check CHECK ((redacted = ANY (ARRAY[(0)::bigint, (1)::bigint]))),
    CONSTRAINT payloads_target_sha256_check CHECK ((length(target_sha256) = 64))
);


--
-- Name: payloads; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.payloads AS
 SELECT p.action_key,
    p.payload_sha256,
        CASE
            WHEN ((p.db_role = SESSION_USER) OR ( SELECT public.tollgate_sees_bodies() AS tollgate_sees_bodies)) THEN p.canonical
            ELSE NULL::text
        END AS canonical,
    p.redacted,
    p.kind,
    p.kind_sha256,
    p.target_sha256,
    p.body_sha256,
    p.agent,
    p.recorded_ms,
    p.context_sha256,
    p.context,
    p.db_role
   FROM tollgate_private.payloads p;


--
-- Name: tollgate_insert_payloads(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: permit_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.permit_attempts (
    action_key text NOT NULL COLLATE pg_catalog."C",
    permit_id text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    attempt_sha256 text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT permit_attempts_attempt_sha256_check CHECK ((attempt_sha256 ~ '^[0-9a-f]{64}$'::text))
);


--
-- Name: tollgate_insert_permit_attempts(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: permits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.permits (
    action_key text NOT NULL COLLATE pg_catalog."C",
    permit_id text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    issued_ms bigint NOT NULL,
    lease_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT permits_check CHECK ((lease_ms > issued_ms)),
    CONSTRAINT permits_permit_id_check CHECK ((length(permit_id) = 36))
);


--
-- Name: tollgate_insert_permits(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: policy_evals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.policy_evals (
    action_key text NOT NULL COLLATE pg_catalog."C",
    mode text NOT NULL COLLATE pg_catalog."C",
    ttl_ms bigint NOT NULL,
    rule_id bigint,
    pattern text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    approvers bigint DEFAULT 1 NOT NULL,
    explain text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT policy_evals_approvers_check CHECK (((approvers >= 1) AND (approvers <= 9))),
    CONSTRAINT policy_evals_mode_check CHECK ((mode = ANY (ARRAY['auto'::text, 'approval'::text, 'deny'::text])))
);


--
-- Name: tollgate_insert_policy_evals(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: policy_rules; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.policy_rules (
    id bigint NOT NULL,
    pattern text NOT NULL COLLATE pg_catalog."C",
    mode text NOT NULL COLLATE pg_catalog."C",
    ttl_ms bigint NOT NULL,
    operator text NOT NULL COLLATE pg_catalog."C",
    set_ms bigint NOT NULL,
    approvers bigint DEFAULT 1 NOT NULL,
    condition text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    priority bigint DEFAULT 0 NOT NULL,
    CONSTRAINT policy_rules_approvers_check CHECK (((approvers >= 1) AND (approvers <= 9))),
    CONSTRAINT policy_rules_condition_check CHECK ((length(condition) <= 2000)),
    CONSTRAINT policy_rules_mode_check CHECK ((mode = ANY (ARRAY['auto'::text, 'approval'::text, 'deny'::text]))),
    CONSTRAINT policy_rules_pattern_check CHECK (((length(pattern) >= 1) AND (length(pattern) <= 200))),
    CONSTRAINT policy_rules_priority_check CHECK (((priority >= '-1000'::integer) AND (priority <= 1000))),
    CONSTRAINT policy_rules_ttl_ms_check CHECK ((ttl_ms >= 0))
);


--
-- Name: tollgate_insert_policy_rules(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: principal_names; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.principal_names (
    id bigint NOT NULL,
    who text NOT NULL COLLATE pg_catalog."C",
    who_key text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    agent_key text NOT NULL COLLATE pg_catalog."C",
    action text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT principal_names_action_check CHECK ((action = ANY (ARRAY['allow'::text, 'revoke'::text]))),
    CONSTRAINT principal_names_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT principal_names_agent_key_check CHECK ((length(agent_key) > 0)),
    CONSTRAINT principal_names_operator_check CHECK ((length(operator) > 0)),
    CONSTRAINT principal_names_who_check CHECK (((length(who) >= 1) AND (length(who) <= 200))),
    CONSTRAINT principal_names_who_key_check CHECK ((length(who_key) > 0))
);


--
-- Name: tollgate_insert_principal_names(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: reconciliations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reconciliations (
    action_key text NOT NULL COLLATE pg_catalog."C",
    result text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    note text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT reconciliations_note_check CHECK ((length(note) > 0)),
    CONSTRAINT reconciliations_operator_check CHECK ((length(operator) > 0)),
    CONSTRAINT reconciliations_result_check CHECK ((result = ANY (ARRAY['executed'::text, 'not-executed'::text])))
);


--
-- Name: tollgate_insert_reconciliations(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: report_refusals; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.report_refusals (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    permit_id text NOT NULL COLLATE pg_catalog."C",
    outcome text NOT NULL COLLATE pg_catalog."C",
    ref text NOT NULL COLLATE pg_catalog."C",
    latency_ms bigint NOT NULL,
    rule text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL
);


--
-- Name: tollgate_insert_report_refusals(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: reports; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reports (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    permit_id text NOT NULL COLLATE pg_catalog."C",
    outcome text NOT NULL COLLATE pg_catalog."C",
    ref text NOT NULL COLLATE pg_catalog."C",
    latency_ms bigint NOT NULL,
    kind text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    result text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT reports_kind_check CHECK ((kind = ANY (ARRAY['accepted'::text, 'late'::text, 'refused'::text]))),
    CONSTRAINT reports_latency_ms_check CHECK ((latency_ms >= 0)),
    CONSTRAINT reports_outcome_check CHECK ((outcome = ANY (ARRAY['succeeded'::text, 'failed'::text, 'unknown'::text]))),
    CONSTRAINT reports_result_check CHECK ((octet_length(result) <= 65536))
);


--
-- Name: tollgate_insert_reports(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: set_aside; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.set_aside (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    fact_table text NOT NULL COLLATE pg_catalog."C",
    row_json text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT set_aside_fact_table_check CHECK ((fact_table = ANY (ARRAY['decisions'::text, 'votes'::text]))),
    CONSTRAINT set_aside_row_json_check CHECK ((length(row_json) <= 20000))
);


--
-- Name: tollgate_insert_set_aside(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: signatures; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.signatures (
    id bigint NOT NULL,
    fact_table text NOT NULL COLLATE pg_catalog."C",
    fact_row text NOT NULL COLLATE pg_catalog."C",
    fingerprint text NOT NULL COLLATE pg_catalog."C",
    signed_ms bigint NOT NULL,
    signature bytea NOT NULL,
    at_ms bigint NOT NULL,
    CONSTRAINT signatures_fingerprint_check CHECK ((fingerprint ~~ 'SHA256:%'::text))
);


--
-- Name: tollgate_insert_signatures(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: votes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.votes (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    decision text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    name_key text NOT NULL COLLATE pg_catalog."C",
    reason text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT votes_check CHECK (((decision = 'approved'::text) OR (length(reason) > 0))),
    CONSTRAINT votes_decision_check CHECK ((decision = ANY (ARRAY['approved'::text, 'rejected'::text]))),
    CONSTRAINT votes_name_key_check CHECK ((length(name_key) > 0)),
    CONSTRAINT votes_operator_check CHECK ((length(operator) > 0))
);


--
-- Name: tollgate_insert_votes(text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_lock_head(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_lock_key(text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_make_insert_fact(text, text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_name_ok(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_name_ok(p text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT octet_length(p) <= 200 AND p !~ '[\U00000001-\U0000001F\U0000007F-\U0000009F\U000000AD\U00000600-\U00000605\U0000061C\U000006DD\U0000070F\U00000890-\U00000891\U000008E2\U0000180E\U0000200B-\U0000200F\U0000202A-\U0000202E\U00002060-\U00002064\U00002066-\U0000206F\U0000FEFF\U0000FFF9-\U0000FFFB\U000110BD\U000110CD\U00013430-\U0001343F\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0001\U000E0020-\U000E007F\U00002028\U00002029]'
$$;


--
-- Name: tollgate_notify(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('tollgate', NEW.action_key);
    RETURN NULL;
END $$;


--
-- Name: tollgate_pattern_matches(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_pattern_matches(p_pattern text, p_kind text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT p_pattern = p_kind OR (p_pattern ~ '[*?]' AND p_kind LIKE
        replace(replace(replace(replace(replace(p_pattern, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%'), '?', '_') COLLATE "C")
$$;


--
-- Name: tollgate_pattern_specificity(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_pattern_specificity(p_pattern text) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN p_pattern !~ '[*?]' THEN 1048576
        ELSE octet_length(p_pattern) - length(p_pattern) + length(replace(replace(p_pattern, '*', ''), '?', '')) END
$$;


--
-- Name: tollgate_pending_kept(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_policy_decide(text, text, text, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_policy_decide(text, text, text, text, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_py_string(text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_record(text, text, text, text, text, text, text, text, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_record_intent(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_record_intent(p_key text, p_sha256 text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    INSERT INTO intents VALUES (p_key, p_sha256, 'recorded') ON CONFLICT (action_key) DO NOTHING;
END $$;


--
-- Name: tollgate_refresh_index(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_refresh_index(p_key text, p_target text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
UPDATE action_index x SET stage = s.stage, deadline_ms = s.deadline, updated_ms = s.updated,
    logical_key = s.logical, epoch = s.epoch, kind = s.kind, agent = s.agent, retained = s.retained, redacted = s.redacted,
    context_sha256 = s.context_sha256,
    target = CASE WHEN s.retained = 0 OR s.redacted = 1 THEN ''
        WHEN p_target IS NOT NULL AND encode(sha256(convert_to(p_target, 'UTF8')), 'hex') = s.target_sha256 THEN p_target
        ELSE x.target END
FROM (SELECT CASE
		WHEN c.action_key IS NOT NULL THEN 'reconciled'
		WHEN r.outcome = 'unknown' THEN 'uncertain'
		WHEN r.outcome IS NOT NULL THEN r.outcome
		WHEN p.action_key IS NOT NULL THEN 'executing'
		WHEN d.decision IS NOT NULL THEN d.decision
		WHEN q.action_key IS NOT NULL THEN 'pending'
		WHEN e.mode = 'deny' THEN 'denied'
		ELSE 'recorded'
	END AS stage, CASE
		WHEN c.action_key IS NULL AND r.outcome IS NULL AND p.action_key IS NOT NULL THEN p.lease_ms
		WHEN p.action_key IS NULL AND d.decision IS NULL AND q.action_key IS NOT NULL THEN q.expires_ms
		ELSE 0
	END AS deadline,
        GREATEST(coalesce(pl.recorded_ms, 0), coalesce(e.at_ms, 0), coalesce(q.requested_ms, 0), coalesce(d.at_ms, 0),
            coalesce(p.issued_ms, 0), coalesce(r.at_ms, 0), coalesce(c.at_ms, 0)) AS updated,
        CASE WHEN pl.action_key IS NOT NULL AND i.action_key ~ '^hsr1:[0-9a-f-]{36}:' THEN substr(i.action_key, 43) ELSE i.action_key END AS logical,
        CASE WHEN pl.action_key IS NOT NULL AND i.action_key ~ '^hsr1:[0-9a-f-]{36}:' THEN substr(i.action_key, 6, 36) ELSE '' END AS epoch,
        coalesce(pl.kind, '') AS kind, coalesce(pl.agent, '') AS agent,
        CASE WHEN pl.action_key IS NULL THEN 0 ELSE 1 END AS retained, coalesce(pl.redacted, 0) AS redacted,
        coalesce(pl.target_sha256, '') AS target_sha256, coalesce(pl.context_sha256, '') AS context_sha256 FROM intents i
		LEFT JOIN reconciliations c ON c.action_key = i.action_key
		LEFT JOIN reports r ON r.action_key = i.action_key AND r.kind = 'accepted'
		LEFT JOIN permits p ON p.action_key = i.action_key
		LEFT JOIN decisions d ON d.action_key = i.action_key AND EXISTS (SELECT 1 FROM events ev WHERE ev.fact_table = 'decisions' AND ev.fact_row = d.action_key)
		LEFT JOIN approval_requests q ON q.action_key = i.action_key
		LEFT JOIN policy_evals e ON e.action_key = i.action_key
    LEFT JOIN payloads pl ON pl.action_key = i.action_key WHERE i.action_key = p_key) s
WHERE x.action_key = p_key;
END
$$;


--
-- Name: tollgate_refuse(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_refuse(p_key text, p_msg text) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'key %: %', p_key, p_msg USING ERRCODE = 'TG002';
END $$;


--
-- Name: tollgate_report(text, text, text, text, bigint, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

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
END $_$;


--
-- Name: tollgate_row_hash(text, text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_seal(bigint, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_seal(p_through bigint, p_wait_ms bigint) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pending_events WHERE p_through IS NULL OR id <= p_through) THEN
        RETURN 0;
    END IF;
    IF p_wait_ms > 0 THEN
        PERFORM set_config('lock_timeout', p_wait_ms::text, true);
    END IF;
    PERFORM 1 FROM chain_head WHERE one = 1 FOR UPDATE;
    RETURN tollgate_private.seal_pending();
END $$;


--
-- Name: tollgate_sealing(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_sealing() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
    SELECT EXISTS (SELECT 1 FROM tollgate_private.sealing WHERE txid = txid_current_if_assigned())
$$;


--
-- Name: tollgate_set_condition(bigint, text); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_sha256_hex(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_sha256_hex(p text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT encode(sha256(convert_to(p, 'UTF8')), 'hex')
$$;


--
-- Name: tollgate_sha256_nul(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tollgate_sha256_nul(p text, p_mark text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT CASE WHEN p_mark IS NULL THEN encode(sha256(convert_to(p, 'UTF8')), 'hex')
        ELSE encode(sha256(decode(replace(encode(convert_to(p, 'UTF8'), 'hex'), encode(convert_to(p_mark, 'UTF8'), 'hex'), '00'), 'hex')), 'hex') END
$$;


--
-- Name: tollgate_wait_head(); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: tollgate_xmin_mine(xid); Type: FUNCTION; Schema: public; Owner: -
--

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


--
-- Name: agent_name_allowed(text); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

CREATE FUNCTION tollgate_private.agent_name_allowed(p_agent text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    RETURN p_agent = session_user
        OR EXISTS (SELECT 1 FROM tollgate_private.agent_names WHERE role = session_user AND agent = p_agent)
        OR pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'MEMBER');
END $$;


--
-- Name: at_database_time(); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: check_agent_is_role(); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: check_attempt_permit(); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: key_finish(text, text, text, bigint, text[], text[], text[], text[]); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: key_new(text, text, text, text, text, text, text, text, text, text, text, text); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: key_parse(text, text, bigint); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: lock_key(text); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: others_key(text); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: policy_decide_at(text, text, text, text, bigint); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: policy_decide_at(text, text, text, text, text, bigint); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: record_write(text, text, text, text, text, text, text, text, text, bigint); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: seal_pending(); Type: FUNCTION; Schema: tollgate_private; Owner: -
--

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


--
-- Name: action_index; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.action_index (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    logical_key text NOT NULL COLLATE pg_catalog."C",
    epoch text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    kind text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    agent text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    stage text DEFAULT 'recorded'::text NOT NULL COLLATE pg_catalog."C",
    deadline_ms bigint DEFAULT 0 NOT NULL,
    updated_ms bigint DEFAULT 0 NOT NULL,
    payload_sha256 text NOT NULL COLLATE pg_catalog."C",
    retained bigint DEFAULT 0 NOT NULL,
    redacted bigint DEFAULT 0 NOT NULL,
    target text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    context_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    answer text GENERATED ALWAYS AS (((((((((payload_sha256 || stage) || ' '::text) || (deadline_ms)::text) || ' '::text) || ((retained + (2 * redacted)))::text) || context_sha256) || ' '::text) || agent)) STORED COLLATE pg_catalog."C",
    CONSTRAINT action_index_stage_check CHECK ((stage = ANY (ARRAY['recorded'::text, 'pending'::text, 'approved'::text, 'denied'::text, 'rejected'::text, 'executing'::text, 'uncertain'::text, 'succeeded'::text, 'failed'::text, 'reconciled'::text])))
);


--
-- Name: action_index_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.action_index ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.action_index_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: agent_tokens_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.agent_tokens ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.agent_tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: archived_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.archived_keys (
    action_key text NOT NULL COLLATE pg_catalog."C",
    archive_id bigint NOT NULL,
    state text NOT NULL COLLATE pg_catalog."C",
    result text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    context_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT archived_keys_context_sha256_check CHECK (((context_sha256 = ''::text) OR (context_sha256 ~ '^[0-9a-f]{64}$'::text))),
    CONSTRAINT archived_keys_result_check CHECK ((result = ANY (ARRAY[''::text, 'executed'::text, 'not-executed'::text]))),
    CONSTRAINT archived_keys_state_check CHECK ((state = ANY (ARRAY['denied'::text, 'rejected'::text, 'expired'::text, 'succeeded'::text, 'failed'::text, 'reconciled'::text])))
);


--
-- Name: chain_head; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chain_head (
    one bigint NOT NULL,
    seq bigint NOT NULL,
    hash text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT chain_head_hash_check CHECK ((length(hash) = 64)),
    CONSTRAINT chain_head_one_check CHECK ((one = 1)),
    CONSTRAINT chain_head_seq_check CHECK ((seq >= 0))
);


--
-- Name: epochs_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.epochs ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.epochs_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.events (
    seq bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    actor text NOT NULL COLLATE pg_catalog."C",
    detail text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    prev_hash text NOT NULL COLLATE pg_catalog."C",
    hash text NOT NULL COLLATE pg_catalog."C",
    fact_table text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    fact_row text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    fact_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    hv bigint DEFAULT 2 NOT NULL,
    CONSTRAINT events_hash_check CHECK ((hash ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT events_hv_check CHECK ((hv = ANY (ARRAY[(1)::bigint, (2)::bigint]))),
    CONSTRAINT events_prev_hash_check CHECK ((prev_hash ~ '^[0-9a-f]{64}$'::text))
);


--
-- Name: fenced_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.fenced ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.fenced_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: intents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.intents (
    action_key text NOT NULL COLLATE pg_catalog."C",
    payload_sha256 text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT intents_payload_sha256_check CHECK ((payload_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT intents_status_check CHECK ((status = 'recorded'::text))
);


--
-- Name: ledger_meta; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ledger_meta (
    one bigint NOT NULL,
    ledger_id text NOT NULL COLLATE pg_catalog."C",
    created_ms bigint NOT NULL,
    CONSTRAINT ledger_meta_ledger_id_check CHECK ((length(ledger_id) = 36)),
    CONSTRAINT ledger_meta_one_check CHECK ((one = 1))
);


--
-- Name: operators_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.operators ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.operators_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: pending_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pending_events (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    actor text NOT NULL COLLATE pg_catalog."C",
    detail text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    fact_table text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    fact_row text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    fact_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: pending_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.pending_events ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.pending_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: policy_conditions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.policy_conditions (
    rule_id bigint NOT NULL,
    ast text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT policy_conditions_ast_check CHECK ((length(ast) <= 65536))
);


--
-- Name: policy_rules_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.policy_rules ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.policy_rules_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: principal_names_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.principal_names ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.principal_names_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: pruned_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pruned_events (
    first_seq bigint NOT NULL,
    last_seq bigint NOT NULL,
    first_prev text NOT NULL COLLATE pg_catalog."C",
    last_hash text NOT NULL COLLATE pg_catalog."C",
    archive_id bigint NOT NULL,
    CONSTRAINT pruned_events_check CHECK ((last_seq >= first_seq)),
    CONSTRAINT pruned_events_first_prev_check CHECK ((first_prev ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT pruned_events_last_hash_check CHECK ((last_hash ~ '^[0-9a-f]{64}$'::text))
);


--
-- Name: report_refusals_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.report_refusals ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.report_refusals_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: reports_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.reports ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.reports_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: set_aside_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.set_aside ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.set_aside_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: signatures_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.signatures ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.signatures_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: tollgate_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tollgate_schema (
    version bigint NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: votes_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.votes ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.votes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: agent_names; Type: TABLE; Schema: tollgate_private; Owner: -
--

CREATE TABLE tollgate_private.agent_names (
    role text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    added_by text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    added_ms bigint DEFAULT ((EXTRACT(epoch FROM clock_timestamp()) * (1000)::numeric))::bigint NOT NULL,
    CONSTRAINT agent_names_agent_check CHECK ((agent <> ''::text)),
    CONSTRAINT agent_names_role_check CHECK ((role <> ''::text))
);


--
-- Name: conflicts_id_seq; Type: SEQUENCE; Schema: tollgate_private; Owner: -
--

ALTER TABLE tollgate_private.conflicts ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME tollgate_private.conflicts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: fact_events; Type: TABLE; Schema: tollgate_private; Owner: -
--

CREATE TABLE tollgate_private.fact_events (
    fact_table text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    id_col text NOT NULL COLLATE pg_catalog."C",
    key_col text NOT NULL COLLATE pg_catalog."C",
    agents boolean NOT NULL
);


--
-- Name: fact_hash_cols; Type: TABLE; Schema: tollgate_private; Owner: -
--

CREATE TABLE tollgate_private.fact_hash_cols (
    fact_table text NOT NULL COLLATE pg_catalog."C",
    n integer NOT NULL,
    col text NOT NULL COLLATE pg_catalog."C",
    opt_def text COLLATE pg_catalog."C",
    tagged boolean NOT NULL
);


--
-- Name: guard_writing; Type: TABLE; Schema: tollgate_private; Owner: -
--

CREATE UNLOGGED TABLE tollgate_private.guard_writing (
    txid bigint NOT NULL
);


--
-- Name: ledger_gate; Type: TABLE; Schema: tollgate_private; Owner: -
--

CREATE TABLE tollgate_private.ledger_gate (
    one boolean
);


--
-- Name: sealing; Type: TABLE; Schema: tollgate_private; Owner: -
--

CREATE TABLE tollgate_private.sealing (
    txid bigint NOT NULL
);


--
-- Data for Name: action_index; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.action_index VALUES (5, 'k:deny', 'k:deny', '', 'deny.x', 'bot2', 'denied', 0, 1796115600000, 'ee96f29f9e2c19b1072523a8132d0ae5a529043df29d86ffbf4a4bc6317e41ac', 1, 1, '', '', DEFAULT);
INSERT INTO public.action_index VALUES (4, 'k:later', 'k:later', '', 'ask', 'agent-7', 'pending', 1796119200000, 1796115600000, '67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848', 1, 0, 'acct-1', '', DEFAULT);
INSERT INTO public.action_index VALUES (3, 'k:no', 'k:no', '', 'ask', 'agent-7', 'rejected', 0, 1796115600000, '67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848', 1, 0, 'acct-1', '', DEFAULT);
INSERT INTO public.action_index VALUES (6, 'k:rec', 'k:rec', '', 'note', 'bot2', 'recorded', 0, 1796115600000, '37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b', 1, 0, 't', '', DEFAULT);
INSERT INTO public.action_index VALUES (1, 'k:refund', 'k:refund', '', 'refund.card', 'bot1', 'succeeded', 0, 1796115600000, '45158013d6d9bec3523b2678e0dde744bc2de52955808d1ac8b496a541b9029b', 1, 0, 'acct-1', 'ddccc0f8c09563212aae6802bc6f095158e222bf5564d12ad36947b5d13936b0', DEFAULT);
INSERT INTO public.action_index VALUES (2, 'k:two', 'k:two', '', 'two', 'agent-7', 'reconciled', 0, 1796115602000, 'f0f85855c8565e081f3613c73a9295210a45a164301159cca654615dacc1899a', 1, 0, 'acct-1', '', DEFAULT);


--
-- Data for Name: agent_tokens; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.agent_tokens VALUES (1, 'fae33e4ae79d4b04', 'create', 'svc-bot', 'svc-bot', 'agent', '9df2df0abd6b47088d5acd90fa191394d10253f12d391956f58f4b33d6c66ea2', 'alice', 1796115602000);
INSERT INTO public.agent_tokens VALUES (2, '48869e90de8ef534', 'create', 'svc-op', 'svc-op', 'operator', '7589ba8f637ac0659dbf7a242a66099e09f6b1ddd527566b3ea560170240facc', 'alice', 1796115602000);
INSERT INTO public.agent_tokens VALUES (3, 'fae33e4ae79d4b04', 'revoke', 'svc-bot', 'svc-bot', 'agent', '', 'alice', 1796115602000);


--
-- Data for Name: approval_requests; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.approval_requests VALUES ('k:later', 'agent-7', 1796115600000, 1796119200000);
INSERT INTO public.approval_requests VALUES ('k:no', 'agent-7', 1796115600000, 1796119200000);
INSERT INTO public.approval_requests VALUES ('k:two', 'agent-7', 1796115600000, 1796119200000);


--
-- Data for Name: archived_keys; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: archives; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: chain_head; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.chain_head VALUES (1, 64, '1f75e70bbd2bfa142e63003a98420948b07ed280a18f1e33adb331a8a4153c9b');


--
-- Data for Name: conflict_reviews; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.conflict_reviews VALUES (1, 'alice', 'seen', 1796115602000);


--
-- Data for Name: decisions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.decisions VALUES ('k:no', 'rejected', 'bob', 'not this one', 1796115600000, 't8683_1_owner');
INSERT INTO public.decisions VALUES ('k:two', 'approved', 'bob', 'second', 1796115600000, 't8683_1_owner');


--
-- Data for Name: epochs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.epochs VALUES (1, '6f1c2a3b-4d5e-4f60-8a7b-000000000004', 'alice', 1796115602000);


--
-- Data for Name: events; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.events VALUES (1, '', 'ledger_created', 'tollgate', '{"ledger_id":"6f1c2a3b-4d5e-4f60-8a7b-000000000001"}', 1796115600000, '0000000000000000000000000000000000000000000000000000000000000000', '701b7c1ad49615d7e445f00555a721295f89483298603134b65fdfd956f5dcd4', 'ledger_meta', '1', 'bf19ea2ed965dcb5843e7d0ddeecb9e96881939d8dc6ae1a6881cf51e247b35c', 2);
INSERT INTO public.events VALUES (2, '', 'policy_set', 'root', '{"approvers":1,"mode":"auto","pattern":"refund.*","rule_id":1,"ttl_ms":0}', 1796115600000, '701b7c1ad49615d7e445f00555a721295f89483298603134b65fdfd956f5dcd4', '56907402b319586ea1ea6290a2df75ad6c2c9a4dcefe0216cd42b9cc8dc96b14', 'policy_rules', '1', '44d2a731a438bd5938a3fb0d49396520ea92ab774de77c16e7a4768794e29b83', 2);
INSERT INTO public.events VALUES (3, 'k:refund', 'recorded', 'bot1', '{"kind":"refund.card","payload_sha256":"45158013d6d9bec3523b2678e0dde744bc2de52955808d1ac8b496a541b9029b","redacted":false}', 1796115600000, '56907402b319586ea1ea6290a2df75ad6c2c9a4dcefe0216cd42b9cc8dc96b14', '9a4f9ebd4fff0c356c3b4a3a639c19540f6e1df0e7747c944d3d31f28d39e216', 'payloads', 'k:refund', '26c7c0032a0e79e1d8e46a04f945901066a475bf6ad16a0aa75f0be0bcbd52a6', 2);
INSERT INTO public.events VALUES (4, 'k:refund', 'policy_evaluated', 'bot1', '{"approvers":1,"mode":"auto","pattern":"refund.*","ttl_ms":0}', 1796115600000, '9a4f9ebd4fff0c356c3b4a3a639c19540f6e1df0e7747c944d3d31f28d39e216', '144bda20a6c4dc7665eaba409489ebba7613827439ce67c7aea5a994bed5147d', 'policy_evals', 'k:refund', '9aa50751c698b7b08f6c191b4591fb7452eba9d75b4ba8f8d7ccc76d1d8c37de', 2);
INSERT INTO public.events VALUES (5, 'k:refund', 'permit_issued', 'bot1', '{"lease_ms":1796116500000,"permit_id":"6f1c2a3b-4d5e-4f60-8a7b-000000000002"}', 1796115600000, '144bda20a6c4dc7665eaba409489ebba7613827439ce67c7aea5a994bed5147d', 'a935a0256b32117214a26e26790d3997ab8a85cc1ee17245ca68e6ab56b6a7eb', 'permits', 'k:refund', '4decc42a375fbc2edd61e469e6982e63ecc4cf7954f0dd58f20a7ae55f85d0b0', 2);
INSERT INTO public.events VALUES (6, 'k:refund', 'attempt_recorded', 'bot1', '{"permit_id":"6f1c2a3b-4d5e-4f60-8a7b-000000000002"}', 1796115600000, 'a935a0256b32117214a26e26790d3997ab8a85cc1ee17245ca68e6ab56b6a7eb', 'cc778632e0d186cfee626dda2b9fee6438db5c730f60872ce944ff545a797922', 'permit_attempts', 'k:refund', '4565dab941471f422260dce7517249bee81246fb08316bb02f79af84a106a667', 2);
INSERT INTO public.events VALUES (7, 'k:refund', 'report_accepted', '6f1c2a3b-4d5e-4f60-8a7b-000000000002', '{"latency_ms":0,"outcome":"succeeded","ref":"pay-1"}', 1796115600000, 'cc778632e0d186cfee626dda2b9fee6438db5c730f60872ce944ff545a797922', 'b61a6632c2f9614f7335940e49ee478446aeb2a7221057b18a5a313c8c1d930e', 'reports', '1', '5dbfaef656a4e12f4fa2c7df040e9c627bf0c9d4ec780c268979bd10ac96c422', 2);
INSERT INTO public.events VALUES (8, 'k:refund', 'report_refused_unfiled', '00000000-0000-4000-8000-000000000000', '{"outcome":"failed","rule":"key k:refund: permit id does not match the key''s permit"}', 1796115600000, 'b61a6632c2f9614f7335940e49ee478446aeb2a7221057b18a5a313c8c1d930e', '968af52b7e490a5527c1a0f8a999f6b05124582d812584d723b7ae6c8f4cd1e1', 'report_refusals', '1', '8bbc3e06404a36f27362cc6a8e69db35b0d978bf7cc3618478e2956240470f34', 2);
INSERT INTO public.events VALUES (9, '', 'operator_added', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4"}', 1796115600000, '968af52b7e490a5527c1a0f8a999f6b05124582d812584d723b7ae6c8f4cd1e1', 'f690dbec083befd0498641ede43878d84876dfa0309c17f8b54ddd28db085483', 'operators', '1', 'e11ef6098936f70307975713a0711011092eaf3107e13ada72ecf19794eb742a', 2);
INSERT INTO public.events VALUES (10, '', 'operator_added', 'bob', '{"fingerprint":"SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI"}', 1796115600000, 'f690dbec083befd0498641ede43878d84876dfa0309c17f8b54ddd28db085483', '35ef5f34d19d5f001605187ed39b87b64cd08f9eb1ef14542883e0537c0f77fe', 'operators', '2', '953dfc7be347327d735f6ec34d35017701cb1749d5abe78ce79d5900be003ccb', 2);
INSERT INTO public.events VALUES (11, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"2","table":"operators"}', 1796115600000, '35ef5f34d19d5f001605187ed39b87b64cd08f9eb1ef14542883e0537c0f77fe', 'f413c8156f5b9cd42df62b9f844e346264e17d1c46a85e22dd6edee83e91da4c', 'signatures', '1', '74cb63ad9b0d08aa28c088674aa98e66c4d86d0f7ad3a2ccf7bdbdd993aa2aa9', 2);
INSERT INTO public.events VALUES (12, '', 'policy_set', 'alice', '{"approvers":1,"mode":"approval","pattern":"ask","rule_id":2,"ttl_ms":3600000}', 1796115600000, 'f413c8156f5b9cd42df62b9f844e346264e17d1c46a85e22dd6edee83e91da4c', '5473629543928f355535cbdaecc79bb5f94d9049f94970c052619e19c3944a46', 'policy_rules', '2', 'f6f363746111fd3297d994032a28b6c51f2bdf49f7a5ba164ef258c26866b05b', 2);
INSERT INTO public.events VALUES (13, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"2","table":"policy_rules"}', 1796115600000, '5473629543928f355535cbdaecc79bb5f94d9049f94970c052619e19c3944a46', '9226e4ff7d350a266f937e732789ebe8d1814a7cfde30486f8d3ffd71604a64f', 'signatures', '2', 'a93bd1b6e8f82079eb361d329f9a2761938e61d19ee9385942010f6e8b9d4f0a', 2);
INSERT INTO public.events VALUES (14, '', 'policy_set', 'alice', '{"approvers":2,"mode":"approval","pattern":"two","rule_id":3,"ttl_ms":3600000}', 1796115600000, '9226e4ff7d350a266f937e732789ebe8d1814a7cfde30486f8d3ffd71604a64f', '0e8081476884553496413c43eb24065e58fcb54894f8e422a297ac84449b8d77', 'policy_rules', '3', '8a3b97cac571d3de0b19e0a4a4b50eae0b62d8c8bde9a52e0dd4fb9f92aeafd9', 2);
INSERT INTO public.events VALUES (15, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"3","table":"policy_rules"}', 1796115600000, '0e8081476884553496413c43eb24065e58fcb54894f8e422a297ac84449b8d77', 'ede5898155a5807df0cf7300862b4e82d9b2e8f35bc6b4fa9658b56ee6852ab4', 'signatures', '3', '9b3450c62b5484e7c9624096b9f8528d4812822f7e817e48e56c2dcb4b0188b9', 2);
INSERT INTO public.events VALUES (16, '', 'policy_set', 'alice', '{"approvers":1,"mode":"auto","pattern":"auto.*","rule_id":4,"ttl_ms":0}', 1796115600000, 'ede5898155a5807df0cf7300862b4e82d9b2e8f35bc6b4fa9658b56ee6852ab4', 'e2353542e5f49a527dd2ddcbfea37d1d5a5256ec7f76d940d4107fcd703fc78d', 'policy_rules', '4', 'ab670bf0f891024e8c137b7704eaaf36eaba0e98ebbb032eeebc08f18d79ee02', 2);
INSERT INTO public.events VALUES (17, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"4","table":"policy_rules"}', 1796115600000, 'e2353542e5f49a527dd2ddcbfea37d1d5a5256ec7f76d940d4107fcd703fc78d', 'c6f4c996cfcaa6b77ed1262265bea019466a2173036ff25147a8f3d542f12337', 'signatures', '4', '827ba478b8954aa232b029667dced0ef17735e919a57bddce128ebb9c2e6b238', 2);
INSERT INTO public.events VALUES (18, '', 'policy_set', 'alice', '{"approvers":1,"mode":"deny","pattern":"deny.*","rule_id":5,"ttl_ms":0}', 1796115600000, 'c6f4c996cfcaa6b77ed1262265bea019466a2173036ff25147a8f3d542f12337', '505b287f7be6863e50a15b6876dd6f39d3ea6ca5cc10a60e6533b846dd395886', 'policy_rules', '5', 'c218a26bd53582462d5cc952b41bc35ccee86bb2a173c5dbf2568e5c822f7db4', 2);
INSERT INTO public.events VALUES (19, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"5","table":"policy_rules"}', 1796115600000, '505b287f7be6863e50a15b6876dd6f39d3ea6ca5cc10a60e6533b846dd395886', 'e5ea7564c6cedc741dd64029264b930834f859d084372cfd9b43a27257fa568d', 'signatures', '5', '39cd5dbc8f56c4fe84b57f107e7f150548b1867283ab608b0b999f564f4749ac', 2);
INSERT INTO public.events VALUES (20, 'k:two', 'recorded', 'agent-7', '{"kind":"two","payload_sha256":"f0f85855c8565e081f3613c73a9295210a45a164301159cca654615dacc1899a","redacted":false}', 1796115600000, 'e5ea7564c6cedc741dd64029264b930834f859d084372cfd9b43a27257fa568d', 'a347971f6e75c67b954abe0ed5dd08994d4234ffd87e57b3705192d3c4015eb9', 'payloads', 'k:two', '3a376800a52ceff3317b8609801f78989fef335727124af497336ca1d4f3fa83', 2);
INSERT INTO public.events VALUES (21, 'k:two', 'policy_evaluated', 'agent-7', '{"approvers":2,"mode":"approval","pattern":"two","ttl_ms":3600000}', 1796115600000, 'a347971f6e75c67b954abe0ed5dd08994d4234ffd87e57b3705192d3c4015eb9', '3661b8709b2da93f0fc5a320b4f9a00a6ee0e16413eaeb924ea7978107c04143', 'policy_evals', 'k:two', 'b2989d00db168a77632911ab7240d52c458d3af46fd187571f836f20ed309e9a', 2);
INSERT INTO public.events VALUES (22, 'k:two', 'approval_requested', 'agent-7', '{"expires_ms":1796119200000}', 1796115600000, '3661b8709b2da93f0fc5a320b4f9a00a6ee0e16413eaeb924ea7978107c04143', 'b60ead0086feae5448cda43bccd69996a523fd5b3f0eaf6a5c78b452221d716c', 'approval_requests', 'k:two', '2fa5b0e8035b89d0b622f00de2f98e5aba47050db2723830bd09194c1237d1c3', 2);
INSERT INTO public.events VALUES (23, 'k:two', 'vote', 'alice', '{"decision":"approved","reason":"first"}', 1796115600000, 'b60ead0086feae5448cda43bccd69996a523fd5b3f0eaf6a5c78b452221d716c', '627c0bbea8adfc3ef39ed0eb9592b6ded4a051f4ffbb8926432d55fd09b5fbeb', 'votes', '1', '8c29c6dae06f3cb6474ae6df3ef88075e659542a42de21ec18866dfe91dc9536', 2);
INSERT INTO public.events VALUES (24, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"votes"}', 1796115600000, '627c0bbea8adfc3ef39ed0eb9592b6ded4a051f4ffbb8926432d55fd09b5fbeb', 'dfac2f314dd0cbce560a798c09848fd8b18b19ab1e4998632ab7b3326c8fd48c', 'signatures', '6', '3fe0c3161d22cc22f774abca0a22fee0cb205ce6f9cbdceedfcc6d77de8f083f', 2);
INSERT INTO public.events VALUES (25, 'k:two', 'vote', 'bob', '{"decision":"approved","reason":"second"}', 1796115600000, 'dfac2f314dd0cbce560a798c09848fd8b18b19ab1e4998632ab7b3326c8fd48c', '1c91a025306106a23d706a0fe36bf14500caa7e03718a78b764f845b8260969c', 'votes', '2', '406193f6392ee877f37c6b9ee3d986fb4f8dc75af4830ea3b9c2937f21e6acb0', 2);
INSERT INTO public.events VALUES (26, 'k:two', 'approved', 'bob', '{"reason":"second"}', 1796115600000, '1c91a025306106a23d706a0fe36bf14500caa7e03718a78b764f845b8260969c', '8ec853ef3b058bcfb5c3154c4fbb3af9447e93ca16bafa46e6c0dbc1c5042613', 'decisions', 'k:two', '05d8ed2d1306d8bbf5d2edd6bff8bf9203888c85137cdc8606820a347420a8e3', 2);
INSERT INTO public.events VALUES (27, '', 'signed', 'bob', '{"fingerprint":"SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI","row":"2","table":"votes"}', 1796115600000, '8ec853ef3b058bcfb5c3154c4fbb3af9447e93ca16bafa46e6c0dbc1c5042613', 'bbf1f051cad6ee2412fbca9aa2a09aa088520694063ae82bb838849d74af3dd8', 'signatures', '7', '212103e392238fee1beadbdfd4549e0d8030820a3fe81c31806c18c1c0385e50', 2);
INSERT INTO public.events VALUES (28, 'k:two', 'permit_issued', 'agent-7', '{"lease_ms":1796115601000,"permit_id":"6f1c2a3b-4d5e-4f60-8a7b-000000000003"}', 1796115600000, 'bbf1f051cad6ee2412fbca9aa2a09aa088520694063ae82bb838849d74af3dd8', 'b3f5cfe9eabaa52e964e49893e1203d9a9500a9a5b05e1fc28f6cd9999972c06', 'permits', 'k:two', '88b5a0246e23c1c8f2d0346d27d808231241d1ebc9931028dd7c6a6253183206', 2);
INSERT INTO public.events VALUES (29, 'k:two', 'report_accepted', '6f1c2a3b-4d5e-4f60-8a7b-000000000003', '{"latency_ms":0,"outcome":"unknown","ref":""}', 1796115600000, 'b3f5cfe9eabaa52e964e49893e1203d9a9500a9a5b05e1fc28f6cd9999972c06', 'cfa672b06e9ddca11c6696a2c1dd890df97669064a2f6f41d43cb0dd377f4581', 'reports', '2', '79ee4aa72d17f9859d66965709f45b95e5baa8213b91e259712c3383ea33ff6f', 2);
INSERT INTO public.events VALUES (30, 'k:no', 'recorded', 'agent-7', '{"kind":"ask","payload_sha256":"67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848","redacted":false}', 1796115600000, 'cfa672b06e9ddca11c6696a2c1dd890df97669064a2f6f41d43cb0dd377f4581', '7b72c7f0d254fb31d64763c70247f3ec333e80926b6c62b382148c47811498fc', 'payloads', 'k:no', 'c1fd46e9e4d4f6f93990d7e089104bfed272f6863c5b225b305084d70ee39886', 2);
INSERT INTO public.events VALUES (31, 'k:no', 'policy_evaluated', 'agent-7', '{"approvers":1,"mode":"approval","pattern":"ask","ttl_ms":3600000}', 1796115600000, '7b72c7f0d254fb31d64763c70247f3ec333e80926b6c62b382148c47811498fc', 'ead117372282501e7dd2d07326bc65e196280cfe23aa6d0489c5aaa345ed5e3c', 'policy_evals', 'k:no', 'dc2a69bfeb2376b8bd158d8070460d68aae87cd42c309fc50361369b420ebd3d', 2);
INSERT INTO public.events VALUES (32, 'k:no', 'approval_requested', 'agent-7', '{"expires_ms":1796119200000}', 1796115600000, 'ead117372282501e7dd2d07326bc65e196280cfe23aa6d0489c5aaa345ed5e3c', '248f0c8c678a0810948f7795c8d9e5ce0b2e1184bc166e762cf54472883b1288', 'approval_requests', 'k:no', 'c32bda4787e8b4029e08fce5ae4984ee2207982ba627d1784f5c90fdeb865f27', 2);
INSERT INTO public.events VALUES (33, 'k:no', 'vote', 'bob', '{"decision":"rejected","reason":"not this one"}', 1796115600000, '248f0c8c678a0810948f7795c8d9e5ce0b2e1184bc166e762cf54472883b1288', '48b276e335f4a1b1ebda62bb77d0596b84e7214a8b40b1b2d441a481a61d9695', 'votes', '3', '7be20277900912f02719270fc7f092b9f3750d583c809bc74b51709c0e980534', 2);
INSERT INTO public.events VALUES (34, 'k:no', 'rejected', 'bob', '{"reason":"not this one"}', 1796115600000, '48b276e335f4a1b1ebda62bb77d0596b84e7214a8b40b1b2d441a481a61d9695', '60fb9bb4ee5117d238753dd41d0c5a746ac7695f8f720c83e2de45821f107311', 'decisions', 'k:no', '814d678759d9211fd316a007bdd330fef5f1f64ed153b12e28e7ee67abd3dd2f', 2);
INSERT INTO public.events VALUES (35, '', 'signed', 'bob', '{"fingerprint":"SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI","row":"3","table":"votes"}', 1796115600000, '60fb9bb4ee5117d238753dd41d0c5a746ac7695f8f720c83e2de45821f107311', '1fbcc8cdb2ce9e9aba28d334ea3ec74c14c3f19874722f74eeda86a23f9eb0c8', 'signatures', '8', '11417ad138c10da84182924b39a4713fb5fd66f1a1d840462658876f7b92f9dd', 2);
INSERT INTO public.events VALUES (36, 'k:later', 'recorded', 'agent-7', '{"kind":"ask","payload_sha256":"67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848","redacted":false}', 1796115600000, '1fbcc8cdb2ce9e9aba28d334ea3ec74c14c3f19874722f74eeda86a23f9eb0c8', '8338bf85247dd74f0e1e6dacfe8e5a5a34610aa67e7037f12c784a793bf15fa7', 'payloads', 'k:later', 'b67bb2102740f45fc064a321990d3504671c8bd29869c51a7b3f6b9482a08ae7', 2);
INSERT INTO public.events VALUES (37, 'k:later', 'policy_evaluated', 'agent-7', '{"approvers":1,"mode":"approval","pattern":"ask","ttl_ms":3600000}', 1796115600000, '8338bf85247dd74f0e1e6dacfe8e5a5a34610aa67e7037f12c784a793bf15fa7', '76edac21d18181b408c9f7c539afbd37792d67dc0a9fbc16a4c53843fe92ef91', 'policy_evals', 'k:later', '53ef9a4eea2fe119f2810c885da90c7957b30b4e02c2db26c9fbaa3047e8b4c3', 2);
INSERT INTO public.events VALUES (38, 'k:later', 'approval_requested', 'agent-7', '{"expires_ms":1796119200000}', 1796115600000, '76edac21d18181b408c9f7c539afbd37792d67dc0a9fbc16a4c53843fe92ef91', 'b84b9f8ea723fe8b260ea0ad04bc96e58fdcfb0bea2aa6c1b9ceaa2bb729a532', 'approval_requests', 'k:later', '7b5da80464926a3ff0853d0eea8be2474485902dbe86ac536a0080524ec721e1', 2);
INSERT INTO public.events VALUES (39, 'k:deny', 'recorded', 'bot2', '{"kind":"deny.x","payload_sha256":"ee96f29f9e2c19b1072523a8132d0ae5a529043df29d86ffbf4a4bc6317e41ac","redacted":true}', 1796115600000, 'b84b9f8ea723fe8b260ea0ad04bc96e58fdcfb0bea2aa6c1b9ceaa2bb729a532', '8a6fdb87feb5a8841e13285dc7a339e82586619918ba6905032456f6d0ec9554', 'payloads', 'k:deny', '5bf0daab870098e5ef036983bc846e5bae9b56ebffc5022b7dec2375286c1f03', 2);
INSERT INTO public.events VALUES (40, 'k:deny', 'policy_evaluated', 'bot2', '{"approvers":1,"mode":"deny","pattern":"deny.*","ttl_ms":0}', 1796115600000, '8a6fdb87feb5a8841e13285dc7a339e82586619918ba6905032456f6d0ec9554', '5918dcf7888ff8ca75fd26e61c68682f1bab3e1fca73bafb92e7565a46606ec8', 'policy_evals', 'k:deny', '2423930e3af324490df61c1465fdd79a541ebb848b934867cbe55ecc5e5bc251', 2);
INSERT INTO public.events VALUES (41, 'k:rec', 'recorded', 'bot2', '{"kind":"note","payload_sha256":"37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b","redacted":false}', 1796115600000, '5918dcf7888ff8ca75fd26e61c68682f1bab3e1fca73bafb92e7565a46606ec8', '3f63337bcb98b8cecae98a66939994d2d14dd5fa05ea5198519038b9de1467e1', 'payloads', 'k:rec', '56eff2afb557064f858a7ed340ee639aebc9126e0ecc7e2b91bc0bfda98166ed', 2);
INSERT INTO public.events VALUES (42, 'k:rec', 'conflict', 'bot2', '{"attempted_sha256":"ab34044ea285643e230d0339abdd5392d76004acc4c9fdb32c3a796033ce1ac2","conflict_id":1,"differs":"body"}', 1796115600000, '3f63337bcb98b8cecae98a66939994d2d14dd5fa05ea5198519038b9de1467e1', '2fe6296571075942a78bf888341c06d30d218850b497c673028d9dc183ff0b20', 'conflicts', '1', '0f692cc36aeec3f371092db331408c03e875dbf03925610b4bd99a01c1b4fd51', 2);
INSERT INTO public.events VALUES (43, 'hsr1:00000000-0000-4000-8000-000000000001:x', 'fenced', '', '{"fenced_id":1,"reason":"epoch 00000000-0000-4000-8000-000000000001 is not active (no epoch has been activated)"}', 1796115600000, '2fe6296571075942a78bf888341c06d30d218850b497c673028d9dc183ff0b20', '7d4dfbe266ac667288282c5629853d22c8d0b260bbb73fb0c608e4d876a09f02', 'fenced', '1', '1fc9831d116160ded3d68d2233a1948d5f7d022edcd965dc6a90ce465cce5690', 2);
INSERT INTO public.events VALUES (44, 'k:two', 'reconciled', 'alice', '{"note":"provider shows nothing","result":"not-executed"}', 1796115602000, '7d4dfbe266ac667288282c5629853d22c8d0b260bbb73fb0c608e4d876a09f02', '09a8eb6c0ce6995a8e0d845c3dfcf0152506dc36583c133794933888bdf60df0', 'reconciliations', 'k:two', 'b446a19da9ed658b67a3d00290e02594241fee582b0b39db78b5864fa565e3fb', 2);
INSERT INTO public.events VALUES (45, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"k:two","table":"reconciliations"}', 1796115602000, '09a8eb6c0ce6995a8e0d845c3dfcf0152506dc36583c133794933888bdf60df0', '7e2239ffab104c1d8908cfd2524e6719b53aa2e982fa6f0bbc1c9e056af105da', 'signatures', '9', 'bdd32fea5447249590a24a5d8b221a7362701fc3f2f6f68549a05dd1a9b07607', 2);
INSERT INTO public.events VALUES (46, 'k:rec', 'conflict_reviewed', 'alice', '{"conflict_id":1,"note":"seen"}', 1796115602000, '7e2239ffab104c1d8908cfd2524e6719b53aa2e982fa6f0bbc1c9e056af105da', 'cc762290c49fd2d3e7ae38d1c0273a824baeb11371d75d16b728059bbe33a428', 'conflict_reviews', '1', '41637ae1319f64f5cb348ae09ce8ca5c685af7fa455b634012bded3bc33baf20', 2);
INSERT INTO public.events VALUES (47, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"conflict_reviews"}', 1796115602000, 'cc762290c49fd2d3e7ae38d1c0273a824baeb11371d75d16b728059bbe33a428', '8b013268970d00ebd1fc839b0bdc3fde360e91dd715e3c568ca286a9c130167c', 'signatures', '10', 'ccf27498366b7b5ea4397e0588b931c7a5380e49f3ce4822bb6d3b89097b4a6d', 2);
INSERT INTO public.events VALUES (48, 'hsr1:00000000-0000-4000-8000-000000000001:x', 'fenced_reviewed', 'alice', '{"fenced_id":1,"note":"seen"}', 1796115602000, '8b013268970d00ebd1fc839b0bdc3fde360e91dd715e3c568ca286a9c130167c', '1addfe207169c3310fcb450be988286f2f88d9221303f1d81c0b6ec50f72c7b3', 'fenced_reviews', '1', '4a67b215d532d78590d0bd2442d7fb63b65f42be168812150c68b33fcde2f2a9', 2);
INSERT INTO public.events VALUES (49, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"fenced_reviews"}', 1796115602000, '1addfe207169c3310fcb450be988286f2f88d9221303f1d81c0b6ec50f72c7b3', 'c18a63556279bc3cf8bf5aa19cf04cc3efed3edb27ab2228d28758e7392be6aa', 'signatures', '11', 'e72717d0b8e9fea53c7f62ae118ca52de0817f3fe182b9d7a4086553fdec87d3', 2);
INSERT INTO public.events VALUES (50, '', 'epoch_activated', 'alice', '{"epoch":"6f1c2a3b-4d5e-4f60-8a7b-000000000004"}', 1796115602000, 'c18a63556279bc3cf8bf5aa19cf04cc3efed3edb27ab2228d28758e7392be6aa', '95a1f77a9ba29075411de62f7e1aa38f64e84fa6b8d5f13cd91b18eef81a981e', 'epochs', '1', '42c6b6386ff82f3c9cde9ba50cacd2628a4bc954cd7ae9addccc848b20d254f8', 2);
INSERT INTO public.events VALUES (51, 'k:later', 'fenced', 'agent-7', '{"fenced_id":2,"reason":"pending under epoch \"\" when epoch 6f1c2a3b-4d5e-4f60-8a7b-000000000004 was activated: it can no longer be approved; use a key under the active epoch"}', 1796115602000, '95a1f77a9ba29075411de62f7e1aa38f64e84fa6b8d5f13cd91b18eef81a981e', 'e4434c2d1b825f003d926a23e53bbcf3c3c9b540d298e51ff793bba3fe2a22aa', 'fenced', '2', 'ba1a01aff516357f6b2e2a57f0bb8a83fb932603188a2cae4d402b86696bf119', 2);
INSERT INTO public.events VALUES (52, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"epochs"}', 1796115602000, 'e4434c2d1b825f003d926a23e53bbcf3c3c9b540d298e51ff793bba3fe2a22aa', '52a2c9c59796bb6ae05a5c018d0dad27e7f0d979a76c0984c249ee19cfec3106', 'signatures', '12', '9ffbca7fe16c7f6e143c79da8594f3494f1214214a16ac15474a60e2d131c07d', 2);
INSERT INTO public.events VALUES (53, '', 'operator_removed', 'bob', '{"fingerprint":"SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI"}', 1796115602000, '52a2c9c59796bb6ae05a5c018d0dad27e7f0d979a76c0984c249ee19cfec3106', '062c3a32b980c039a206d4aef061ec8fe77bf73025cf2243ff32c9cb2081eb48', 'operators', '3', 'd16e1c7e443e42a3356349e524cf769decb528d89141f4e838c004f598eb2124', 2);
INSERT INTO public.events VALUES (54, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"3","table":"operators"}', 1796115602000, '062c3a32b980c039a206d4aef061ec8fe77bf73025cf2243ff32c9cb2081eb48', 'eeef1f20d5844196b087ac62dfb82f59b5f0754005b16d4e8550d5438b72d2eb', 'signatures', '13', '0dcf8bbcf6309f0700f6709ceda965046d61a863009a6f586e52f4d013d8b7b6', 2);
INSERT INTO public.events VALUES (55, '', 'token_created', 'alice', '{"name":"svc-bot","scope":"agent","token_id":"fae33e4ae79d4b04"}', 1796115602000, 'eeef1f20d5844196b087ac62dfb82f59b5f0754005b16d4e8550d5438b72d2eb', '096943847ea564e1506b8bd9b0c8a576a9af5ab4e9a3a4291b3a07bad863fdf5', 'agent_tokens', '1', '02398671323234b8849770e792db7abecf2b52ddee199e0d1c659b38e409f842', 2);
INSERT INTO public.events VALUES (56, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"agent_tokens"}', 1796115602000, '096943847ea564e1506b8bd9b0c8a576a9af5ab4e9a3a4291b3a07bad863fdf5', '0f9b2a09fe2ae9b0eee047890fbf175951593f1be4222d5126cbd3ca57b83250', 'signatures', '14', '6c0d637fd153438f9a6bec7dea26d2126b235827254d340294a54d08de93249b', 2);
INSERT INTO public.events VALUES (57, '', 'token_created', 'alice', '{"name":"svc-op","scope":"operator","token_id":"48869e90de8ef534"}', 1796115602000, '0f9b2a09fe2ae9b0eee047890fbf175951593f1be4222d5126cbd3ca57b83250', 'fe54aee0a3f0f1769459e11e3daa4d81e90a61c61305cc9b5611f4712ddb3abd', 'agent_tokens', '2', '4a56af8db56e65d57e2221bf1ce1c3dfa60c6ed458354c77c9d94ac12635de5e', 2);
INSERT INTO public.events VALUES (58, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"2","table":"agent_tokens"}', 1796115602000, 'fe54aee0a3f0f1769459e11e3daa4d81e90a61c61305cc9b5611f4712ddb3abd', '2c462de7d38442ca828a512937c1605a4674835bf963f1908205d8516347605a', 'signatures', '15', 'e3640178639d4f6b616f2107476f8914fdca8bdcfba28ad06f542e38a9c7a0b2', 2);
INSERT INTO public.events VALUES (59, '', 'token_revoked', 'alice', '{"name":"svc-bot","token_id":"fae33e4ae79d4b04"}', 1796115602000, '2c462de7d38442ca828a512937c1605a4674835bf963f1908205d8516347605a', '4420cf846f4cd0178016f25f653bbcb908f14a79a24d28f41fb8d412f454973e', 'agent_tokens', '3', 'be9839b94645b63d02b3e356dad232e5ffe9d3b42fdfabd0dce344fed3ec772b', 2);
INSERT INTO public.events VALUES (60, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"3","table":"agent_tokens"}', 1796115602000, '4420cf846f4cd0178016f25f653bbcb908f14a79a24d28f41fb8d412f454973e', 'dc809ab18aaa32bdacefdd6fd0657c1399c846e4d518ef23927e37d5a24a3d10', 'signatures', '16', '91fac82bc01a28b0655ce96fc7c9af6c95bc237887502146e485116963af6bac', 2);
INSERT INTO public.events VALUES (61, '', 'principal_allowed', 'alice', '{"agent":"bot1","who":"svc-op"}', 1796115602000, 'dc809ab18aaa32bdacefdd6fd0657c1399c846e4d518ef23927e37d5a24a3d10', 'e379f01368a751f713f0e1f52377ae3d9f6eb988b499b8b729264f2729739db5', 'principal_names', '1', '2e40afa9ddd62d81e795d079ab2c4c494a396930049ae44013926cbfb95b5173', 2);
INSERT INTO public.events VALUES (62, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"principal_names"}', 1796115602000, 'e379f01368a751f713f0e1f52377ae3d9f6eb988b499b8b729264f2729739db5', 'f13032918c3203a96247cd0297d6dd574ef9ff05469d807615de847672b81982', 'signatures', '17', '0ca7a572fee02d9b85d0b5dd183a775c6c5047c5a2cb8a2b40f0ff042c20ee27', 2);
INSERT INTO public.events VALUES (63, '', 'principal_revoked', 'alice', '{"agent":"bot1","who":"svc-op"}', 1796115602000, 'f13032918c3203a96247cd0297d6dd574ef9ff05469d807615de847672b81982', '6db559c3fe66d89ae51426b54392caf60f0464ba7ac1b03fee7ae1fc44f3fd49', 'principal_names', '2', 'a321f37f865a3da23b8cc2820d63950742794d020c59e1546d486c5d0e9226e7', 2);
INSERT INTO public.events VALUES (64, '', 'signed', 'alice', '{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"2","table":"principal_names"}', 1796115602000, '6db559c3fe66d89ae51426b54392caf60f0464ba7ac1b03fee7ae1fc44f3fd49', '1f75e70bbd2bfa142e63003a98420948b07ed280a18f1e33adb331a8a4153c9b', 'signatures', '18', 'ffa243caa9f8fe5caebc61134371bfa221bae6878d2b7e159ae782d777301ac3', 2);


--
-- Data for Name: fenced; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.fenced VALUES (1, 'hsr1:00000000-0000-4000-8000-000000000001:x', '00000000-0000-4000-8000-000000000001', '', '1ff55be109d02043fd3ab303852ff571948808515fa0ecf393d55a786f8d6f08', '', 'epoch 00000000-0000-4000-8000-000000000001 is not active (no epoch has been activated)', 1796115600000);
INSERT INTO public.fenced VALUES (2, 'k:later', '', '6f1c2a3b-4d5e-4f60-8a7b-000000000004', '67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848', 'agent-7', 'pending under epoch "" when epoch 6f1c2a3b-4d5e-4f60-8a7b-000000000004 was activated: it can no longer be approved; use a key under the active epoch', 1796115602000);


--
-- Data for Name: fenced_reviews; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.fenced_reviews VALUES (1, 'alice', 'seen', 1796115602000);


--
-- Data for Name: intents; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.intents VALUES ('k:deny', 'ee96f29f9e2c19b1072523a8132d0ae5a529043df29d86ffbf4a4bc6317e41ac', 'recorded');
INSERT INTO public.intents VALUES ('k:later', '67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848', 'recorded');
INSERT INTO public.intents VALUES ('k:no', '67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848', 'recorded');
INSERT INTO public.intents VALUES ('k:rec', '37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b', 'recorded');
INSERT INTO public.intents VALUES ('k:refund', '45158013d6d9bec3523b2678e0dde744bc2de52955808d1ac8b496a541b9029b', 'recorded');
INSERT INTO public.intents VALUES ('k:two', 'f0f85855c8565e081f3613c73a9295210a45a164301159cca654615dacc1899a', 'recorded');


--
-- Data for Name: ledger_meta; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ledger_meta VALUES (1, '6f1c2a3b-4d5e-4f60-8a7b-000000000001', 1796115600000);


--
-- Data for Name: operators; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.operators VALUES (1, 'alice', 'alice', 'add', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICxE+KdUEaOlgJnQhNLaIkgn0s5h7MwTk3BDro5kRBas', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115600000);
INSERT INTO public.operators VALUES (2, 'bob', 'bob', 'add', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFdMhZAT53RXXt4hCxnImgl8/sciUpH7dUUMTKACSfvF', 'SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI', 1796115600000);
INSERT INTO public.operators VALUES (3, 'bob', 'bob', 'remove', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFdMhZAT53RXXt4hCxnImgl8/sciUpH7dUUMTKACSfvF', 'SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI', 1796115602000);


--
-- Data for Name: pending_events; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: permit_attempts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.permit_attempts VALUES ('k:refund', '6f1c2a3b-4d5e-4f60-8a7b-000000000002', 'bot1', '82d373a931cd3ca890ebfd8b3f985a369ad22360c0998058980fac614a76cfbc', 1796115600000);


--
-- Data for Name: permits; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.permits VALUES ('k:refund', '6f1c2a3b-4d5e-4f60-8a7b-000000000002', 'bot1', 1796115600000, 1796116500000, 't8683_1_owner');
INSERT INTO public.permits VALUES ('k:two', '6f1c2a3b-4d5e-4f60-8a7b-000000000003', 'agent-7', 1796115600000, 1796115601000, 't8683_1_owner');


--
-- Data for Name: policy_conditions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.policy_conditions VALUES (1, '{"v":1,"reads":["amount"],"expr":["call","_\u003c=_",["ctx","amount"],["i",50]]}');


--
-- Data for Name: policy_evals; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.policy_evals VALUES ('k:deny', 'deny', 0, 5, 'deny.*', 1796115600000, 1, '');
INSERT INTO public.policy_evals VALUES ('k:later', 'approval', 3600000, 2, 'ask', 1796115600000, 1, '');
INSERT INTO public.policy_evals VALUES ('k:no', 'approval', 3600000, 2, 'ask', 1796115600000, 1, '');
INSERT INTO public.policy_evals VALUES ('k:refund', 'auto', 0, 1, 'refund.*', 1796115600000, 1, '{"rule_id":1,"pattern":"refund.*","condition":"context.amount \u003c= 50","read":{"context.amount":20},"semantics":2}');
INSERT INTO public.policy_evals VALUES ('k:two', 'approval', 3600000, 3, 'two', 1796115600000, 2, '');


--
-- Data for Name: policy_rules; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.policy_rules VALUES (1, 'refund.*', 'auto', 0, 'root', 1796115600000, 1, 'context.amount <= 50', 1);
INSERT INTO public.policy_rules VALUES (2, 'ask', 'approval', 3600000, 'alice', 1796115600000, 1, '', 0);
INSERT INTO public.policy_rules VALUES (3, 'two', 'approval', 3600000, 'alice', 1796115600000, 2, '', 0);
INSERT INTO public.policy_rules VALUES (4, 'auto.*', 'auto', 0, 'alice', 1796115600000, 1, '', 0);
INSERT INTO public.policy_rules VALUES (5, 'deny.*', 'deny', 0, 'alice', 1796115600000, 1, '', 0);


--
-- Data for Name: principal_names; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.principal_names VALUES (1, 'svc-op', 'svc-op', 'bot1', 'bot1', 'allow', 'alice', 1796115602000);
INSERT INTO public.principal_names VALUES (2, 'svc-op', 'svc-op', 'bot1', 'bot1', 'revoke', 'alice', 1796115602000);


--
-- Data for Name: pruned_events; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: reconciliations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.reconciliations VALUES ('k:two', 'not-executed', 'alice', 'provider shows nothing', 1796115602000, 't8683_1_owner');


--
-- Data for Name: report_refusals; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.report_refusals VALUES (1, 'k:refund', '00000000-0000-4000-8000-000000000000', 'failed', '', 0, 'key k:refund: permit id does not match the key''s permit', 1796115600000);


--
-- Data for Name: reports; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.reports VALUES (1, 'k:refund', '6f1c2a3b-4d5e-4f60-8a7b-000000000002', 'succeeded', 'pay-1', 0, 'accepted', 1796115600000, '{"ok":true}');
INSERT INTO public.reports VALUES (2, 'k:two', '6f1c2a3b-4d5e-4f60-8a7b-000000000003', 'unknown', '', 0, 'accepted', 1796115600000, '');


--
-- Data for Name: set_aside; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: signatures; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.signatures VALUES (1, 'operators', '2', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115600000, '\x0000000b7373682d65643235353139000000400346d3ae72e85a669cfe99cb2005b2ee5e1849b0558d2606bb0bb57fb3713ac9a881d99422c9ff76f1d36911820363aa1baf4c1873ea20be9a2fd0afce35240e', 1796115600000);
INSERT INTO public.signatures VALUES (2, 'policy_rules', '2', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115600000, '\x0000000b7373682d6564323535313900000040cf490944b48c45400ba9fe410a25c8afb415f130c1acee79dcf0c615842b44e137ac1c9160a809c2644963885204de946f05773b3490c65fcb5b04a646127001', 1796115600000);
INSERT INTO public.signatures VALUES (3, 'policy_rules', '3', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115600000, '\x0000000b7373682d65643235353139000000405fb3524411b197956e8e97d0275cf6b4e0cc7d5c6bf006f1e1bad13e77c6aee654813f05cd9a52ca1202ac90fa0e57cbf1701f85cd09b4bd9937163671adb603', 1796115600000);
INSERT INTO public.signatures VALUES (4, 'policy_rules', '4', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115600000, '\x0000000b7373682d65643235353139000000405d9147fa3968db625c75ee64b16e4c21c6646981a7e667b4ba773cb6b8be29f52b4309dd98acb70492ee947aeba6498eddc2c34e2290e5314ca58a74d341ec0f', 1796115600000);
INSERT INTO public.signatures VALUES (5, 'policy_rules', '5', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115600000, '\x0000000b7373682d6564323535313900000040da05ffc9c9bbbd923b4bf68a21b414f13175dd49ce468e5d9fe9688ac5135cfa7ff27044efdde66fe067667fb7c22e6c5c712b67fe96a30d4d75347a7d97da0c', 1796115600000);
INSERT INTO public.signatures VALUES (6, 'votes', '1', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115600000, '\x0000000b7373682d65643235353139000000409de12d32d574f5160fa3284135e6ca01dfceccb4609dcbd1f0638a3cd3bb93bad9b27283ec1e8459c98b17bd19585c6a7b2fa1b8e9790310d70e6c836454e803', 1796115600000);
INSERT INTO public.signatures VALUES (7, 'votes', '2', 'SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI', 1796115600000, '\x0000000b7373682d6564323535313900000040b01b5c8ad5c757c4b3c8391817cf258378e3b718311de8e1ef9f6cc61dcbac51862ebfce6f07c75eeb44263825ee926f8d4abf53c5464973e47e2ff7613d2703', 1796115600000);
INSERT INTO public.signatures VALUES (8, 'votes', '3', 'SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI', 1796115600000, '\x0000000b7373682d65643235353139000000403a4287578c182d1139698d4c77c9ddab136ebfb1c5ef72fefd768b657b6c188dd4ce04b08826ec2f4111a558d48e72ae4fcf3f949bc255d1c1a29ba6f6cba905', 1796115600000);
INSERT INTO public.signatures VALUES (9, 'reconciliations', 'k:two', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d65643235353139000000403bc176929ffe41de52d473a6c366a629c048965da86bfb16ddfc5648d89a26b02c12dc8e927ec06c91cabb600fa4a3a2e0cc39919104c9487300c3199c10dc06', 1796115602000);
INSERT INTO public.signatures VALUES (10, 'conflict_reviews', '1', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d6564323535313900000040ca0241fd59c1f8e2b251654259ece5edd8938e678d62673a7cd5b23410a99adf7a3cf0f245a69f1ddf8cb045df1f6ae8e9df8e63da7f82c6b365d8c146ded803', 1796115602000);
INSERT INTO public.signatures VALUES (11, 'fenced_reviews', '1', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d6564323535313900000040c0616fd8955805966f543816703b7e62b3b2f68c4dc7791f234935755f4c169f958fac0f692ec391566070c806c31a58366cc1f2d1a3391128d53f097186870c', 1796115602000);
INSERT INTO public.signatures VALUES (12, 'epochs', '1', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d6564323535313900000040727fba06be62e7cb2dab43771134ac3f6a32f6dcc0aec7376a0703ad16c706d11205959de9a247056bc909da7acd5391eb6a9110156efd2772cbfc400330490d', 1796115602000);
INSERT INTO public.signatures VALUES (13, 'operators', '3', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d6564323535313900000040dc77adac12d4fb64b36792e6f68c09118d0047d5c10e3844b08df564364eeead6fd6e525a9565eb78d7c7c3cebe7827418d2302bd293e2793c77c1ff4a7c9703', 1796115602000);
INSERT INTO public.signatures VALUES (14, 'agent_tokens', '1', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d6564323535313900000040029d4106244a82abb11a287fd80f454981b4242ac8d7518ee9f96734c4343f3f76482d3b7b69d0d527e6103a2fb157d08db66cb375f16273ecf937532f2f9b0d', 1796115602000);
INSERT INTO public.signatures VALUES (15, 'agent_tokens', '2', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d6564323535313900000040768ce04a02844d741a07e95ec25eac640808f21c3a1ae6ecc07231a2c702ede208a2a9874e25ddec359490350e1c61c4916f8e5abc54fb817b363428f7f1c106', 1796115602000);
INSERT INTO public.signatures VALUES (16, 'agent_tokens', '3', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d6564323535313900000040b605267bb0dfc71cf8de5e8bde65cdbb7d36d6626304dfdbd470eeb425f1dc03a4d05926601538e6397b524127b68f589b51a801023dfd033f0494204889f706', 1796115602000);
INSERT INTO public.signatures VALUES (17, 'principal_names', '1', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d6564323535313900000040a33a7e843a78ac314bfead9fb97837e6bee48dc970da295cad3d5bc7a08160003efee952b0af78edb0aa8884ffc566fd7105262cae01b566045bfbcd9fafd206', 1796115602000);
INSERT INTO public.signatures VALUES (18, 'principal_names', '2', 'SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4', 1796115602000, '\x0000000b7373682d656432353531390000004088c4750a1c067e2871400f2fcb8bcf5f51ea1c95e4813088490fefc82c4bc95439ab27b5fb31b11c39d0eea1f3ae425e4e7301503abf5580624560c3c4dc7f06', 1796115602000);


--
-- Data for Name: tollgate_schema; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.tollgate_schema VALUES (7, '2026-12-06 03:00:03.445722+00');
INSERT INTO public.tollgate_schema VALUES (8, '2026-12-06 03:00:03.721228+00');
INSERT INTO public.tollgate_schema VALUES (9, '2026-12-06 03:00:03.735081+00');
INSERT INTO public.tollgate_schema VALUES (10, '2026-12-06 03:00:03.798863+00');
INSERT INTO public.tollgate_schema VALUES (11, '2026-12-06 03:00:03.836239+00');
INSERT INTO public.tollgate_schema VALUES (12, '2026-12-06 03:00:03.862868+00');
INSERT INTO public.tollgate_schema VALUES (13, '2026-12-06 03:00:03.882645+00');
INSERT INTO public.tollgate_schema VALUES (14, '2026-12-06 03:00:03.88582+00');
INSERT INTO public.tollgate_schema VALUES (15, '2026-12-06 03:00:03.898786+00');
INSERT INTO public.tollgate_schema VALUES (16, '2026-12-06 03:00:03.965183+00');
INSERT INTO public.tollgate_schema VALUES (17, '2026-12-06 03:00:03.998393+00');
INSERT INTO public.tollgate_schema VALUES (19, '2026-12-06 03:00:04.002786+00');
INSERT INTO public.tollgate_schema VALUES (20, '2026-12-06 03:00:04.006794+00');
INSERT INTO public.tollgate_schema VALUES (21, '2026-12-06 03:00:04.008211+00');
INSERT INTO public.tollgate_schema VALUES (22, '2026-12-06 03:00:04.017692+00');
INSERT INTO public.tollgate_schema VALUES (23, '2026-12-06 03:00:04.019548+00');
INSERT INTO public.tollgate_schema VALUES (24, '2026-12-06 03:00:04.026948+00');
INSERT INTO public.tollgate_schema VALUES (25, '2026-12-06 03:00:04.032078+00');
INSERT INTO public.tollgate_schema VALUES (26, '2026-12-06 03:00:04.033347+00');
INSERT INTO public.tollgate_schema VALUES (27, '2026-12-06 03:00:04.034794+00');
INSERT INTO public.tollgate_schema VALUES (28, '2026-12-06 03:00:04.03618+00');
INSERT INTO public.tollgate_schema VALUES (29, '2026-12-06 03:00:04.04568+00');
INSERT INTO public.tollgate_schema VALUES (30, '2026-12-06 03:00:04.05806+00');
INSERT INTO public.tollgate_schema VALUES (31, '2026-12-06 03:00:04.060767+00');
INSERT INTO public.tollgate_schema VALUES (32, '2026-12-06 03:00:04.066224+00');
INSERT INTO public.tollgate_schema VALUES (33, '2026-12-06 03:00:04.068247+00');
INSERT INTO public.tollgate_schema VALUES (34, '2026-12-06 03:00:04.074241+00');
INSERT INTO public.tollgate_schema VALUES (35, '2026-12-06 03:00:04.099448+00');
INSERT INTO public.tollgate_schema VALUES (36, '2026-12-06 03:00:04.101893+00');
INSERT INTO public.tollgate_schema VALUES (38, '2026-12-06 03:00:04.133035+00');


--
-- Data for Name: votes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.votes VALUES (1, 'k:two', 'approved', 'alice', 'alice', 'first', 1796115600000, 't8683_1_owner');
INSERT INTO public.votes VALUES (2, 'k:two', 'approved', 'bob', 'bob', 'second', 1796115600000, 't8683_1_owner');
INSERT INTO public.votes VALUES (3, 'k:no', 'rejected', 'bob', 'bob', 'not this one', 1796115600000, 't8683_1_owner');


--
-- Data for Name: agent_names; Type: TABLE DATA; Schema: tollgate_private; Owner: -
--



--
-- Data for Name: conflicts; Type: TABLE DATA; Schema: tollgate_private; Owner: -
--

INSERT INTO tollgate_private.conflicts VALUES (1, 'k:rec', '37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b', 'ab34044ea285643e230d0339abdd5392d76004acc4c9fdb32c3a796033ce1ac2', '{"body":"other","kind":"note","target":"t"}', 0, 'body', 'bot2', 1796115600000, 't8683_1_owner');


--
-- Data for Name: fact_events; Type: TABLE DATA; Schema: tollgate_private; Owner: -
--

INSERT INTO tollgate_private.fact_events VALUES ('payloads', 'recorded', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('conflicts', 'conflict', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('policy_rules', 'policy_set', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('policy_evals', 'policy_evaluated', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('approval_requests', 'approval_requested', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('decisions', 'approved', 'action_key', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('decisions', 'rejected', 'action_key', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('permits', 'permit_issued', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('reports', 'report_accepted', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('reports', 'report_late', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('reports', 'report_refused', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('report_refusals', 'report_refused_unfiled', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('reconciliations', 'reconciled', 'action_key', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('epochs', 'epoch_activated', 'seq', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('fenced', 'fenced', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('conflict_reviews', 'conflict_reviewed', 'conflict_id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('fenced_reviews', 'fenced_reviewed', 'fenced_id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('ledger_meta', 'ledger_created', 'one', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('operators', 'operator_added', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('operators', 'operator_removed', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('votes', 'vote', 'id', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('signatures', 'signed', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('archives', 'archive_checkpoint', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('set_aside', 'set_aside', 'id', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('agent_tokens', 'token_created', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('agent_tokens', 'token_revoked', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('principal_names', 'principal_allowed', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('principal_names', 'principal_revoked', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('permit_attempts', 'attempt_recorded', 'action_key', 'action_key', true);


--
-- Data for Name: fact_hash_cols; Type: TABLE DATA; Schema: tollgate_private; Owner: -
--

INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 2, 'payload_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 3, 'canonical', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 4, 'redacted', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 5, 'kind', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 6, 'kind_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 7, 'target_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 8, 'body_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 9, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 10, 'recorded_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 11, 'context_sha256', '', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 12, 'context', '', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 1, 'id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 2, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 3, 'stored_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 4, 'attempted_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 5, 'attempted', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 6, 'redacted', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 7, 'differs', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 8, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 9, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 2, 'mode', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 3, 'ttl_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 4, 'rule_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 5, 'pattern', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 6, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 7, 'approvers', '1', false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 8, 'explain', '', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('approval_requests', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('approval_requests', 2, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('approval_requests', 3, 'requested_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('approval_requests', 4, 'expires_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 2, 'permit_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 3, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 4, 'issued_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 5, 'lease_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 1, 'id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 2, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 3, 'permit_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 4, 'outcome', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 5, 'ref', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 6, 'latency_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 7, 'kind', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 8, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 9, 'result', '', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 1, 'id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 2, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 3, 'permit_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 4, 'outcome', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 5, 'ref', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 6, 'latency_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 7, 'rule', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 8, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 1, 'id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 2, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 3, 'key_epoch', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 4, 'active_epoch', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 5, 'payload_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 6, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 7, 'reason', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 8, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 2, 'permit_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 3, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 4, 'attempt_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 5, 'at_ms', NULL, false);


--
-- Data for Name: guard_writing; Type: TABLE DATA; Schema: tollgate_private; Owner: -
--



--
-- Data for Name: ledger_gate; Type: TABLE DATA; Schema: tollgate_private; Owner: -
--



--
-- Data for Name: payloads; Type: TABLE DATA; Schema: tollgate_private; Owner: -
--

INSERT INTO tollgate_private.payloads VALUES ('k:deny', 'ee96f29f9e2c19b1072523a8132d0ae5a529043df29d86ffbf4a4bc6317e41ac', NULL, 1, 'deny.x', '6d983f7d4b5d2c65b3066fdd15ec6c0fabcaa534e3f48ecb38e360eb9679a46e', 'e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8', '3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d', 'bot2', 1796115600000, '', '', 't8683_1_owner');
INSERT INTO tollgate_private.payloads VALUES ('k:later', '67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848', '{"body":"refund 40","kind":"ask","target":"acct-1"}', 0, 'ask', '2f2fc7f2e9ce13b09b84f63d54d0b4a59f4dbd46aea41da67023817e2d0c5e59', 'ba36a4edd92d37c66d4e05462aea603a0f34c2eea5cbe39d7b704f642fca326f', '12e3e612f21a311079bbb13dd00eee0268a9c12379c3025b96e3755a2b2bc484', 'agent-7', 1796115600000, '', '', 't8683_1_owner');
INSERT INTO tollgate_private.payloads VALUES ('k:no', '67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848', '{"body":"refund 40","kind":"ask","target":"acct-1"}', 0, 'ask', '2f2fc7f2e9ce13b09b84f63d54d0b4a59f4dbd46aea41da67023817e2d0c5e59', 'ba36a4edd92d37c66d4e05462aea603a0f34c2eea5cbe39d7b704f642fca326f', '12e3e612f21a311079bbb13dd00eee0268a9c12379c3025b96e3755a2b2bc484', 'agent-7', 1796115600000, '', '', 't8683_1_owner');
INSERT INTO tollgate_private.payloads VALUES ('k:rec', '37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b', '{"body":"b","kind":"note","target":"t"}', 0, 'note', 'edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8', 'e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8', '3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d', 'bot2', 1796115600000, '', '', 't8683_1_owner');
INSERT INTO tollgate_private.payloads VALUES ('k:refund', '45158013d6d9bec3523b2678e0dde744bc2de52955808d1ac8b496a541b9029b', '{"body":"20 EUR","kind":"refund.card","target":"acct-1"}', 0, 'refund.card', '518bb6062d5a78387281ad2300477af85783e6cdc73464564d8a4685f1c42a66', 'ba36a4edd92d37c66d4e05462aea603a0f34c2eea5cbe39d7b704f642fca326f', '2628199be544c53d9b6df5d15c18349082f0efd942051bf75a58df1e13e39042', 'bot1', 1796115600000, 'ddccc0f8c09563212aae6802bc6f095158e222bf5564d12ad36947b5d13936b0', '{"amount":20}', 't8683_1_owner');
INSERT INTO tollgate_private.payloads VALUES ('k:two', 'f0f85855c8565e081f3613c73a9295210a45a164301159cca654615dacc1899a', '{"body":"refund 40","kind":"two","target":"acct-1"}', 0, 'two', '3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3', 'ba36a4edd92d37c66d4e05462aea603a0f34c2eea5cbe39d7b704f642fca326f', '12e3e612f21a311079bbb13dd00eee0268a9c12379c3025b96e3755a2b2bc484', 'agent-7', 1796115600000, '', '', 't8683_1_owner');


--
-- Data for Name: sealing; Type: TABLE DATA; Schema: tollgate_private; Owner: -
--



--
-- Name: action_index_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.action_index_id_seq', 7, false);


--
-- Name: agent_tokens_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.agent_tokens_id_seq', 4, false);


--
-- Name: epochs_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.epochs_seq_seq', 2, false);


--
-- Name: fenced_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.fenced_id_seq', 3, false);


--
-- Name: operators_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.operators_id_seq', 4, false);


--
-- Name: pending_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.pending_events_id_seq', 1, false);


--
-- Name: policy_rules_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.policy_rules_id_seq', 6, false);


--
-- Name: principal_names_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.principal_names_id_seq', 3, false);


--
-- Name: report_refusals_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.report_refusals_id_seq', 2, false);


--
-- Name: reports_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.reports_id_seq', 3, false);


--
-- Name: set_aside_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.set_aside_id_seq', 1, false);


--
-- Name: signatures_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.signatures_id_seq', 19, false);


--
-- Name: votes_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.votes_id_seq', 4, false);


--
-- Name: conflicts_id_seq; Type: SEQUENCE SET; Schema: tollgate_private; Owner: -
--

SELECT pg_catalog.setval('tollgate_private.conflicts_id_seq', 2, false);


--
-- Name: action_index action_index_action_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.action_index
    ADD CONSTRAINT action_index_action_key_key UNIQUE (action_key);


--
-- Name: action_index action_index_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.action_index
    ADD CONSTRAINT action_index_pkey PRIMARY KEY (id);


--
-- Name: agent_tokens agent_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_tokens
    ADD CONSTRAINT agent_tokens_pkey PRIMARY KEY (id);


--
-- Name: agent_tokens agent_tokens_token_id_action_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agent_tokens
    ADD CONSTRAINT agent_tokens_token_id_action_key UNIQUE (token_id, action);


--
-- Name: approval_requests approval_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approval_requests
    ADD CONSTRAINT approval_requests_pkey PRIMARY KEY (action_key);


--
-- Name: archived_keys archived_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.archived_keys
    ADD CONSTRAINT archived_keys_pkey PRIMARY KEY (action_key);


--
-- Name: archives archives_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.archives
    ADD CONSTRAINT archives_pkey PRIMARY KEY (id);


--
-- Name: chain_head chain_head_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chain_head
    ADD CONSTRAINT chain_head_pkey PRIMARY KEY (one);


--
-- Name: conflict_reviews conflict_reviews_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conflict_reviews
    ADD CONSTRAINT conflict_reviews_pkey PRIMARY KEY (conflict_id);


--
-- Name: decisions decisions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.decisions
    ADD CONSTRAINT decisions_pkey PRIMARY KEY (action_key);


--
-- Name: epochs epochs_epoch_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.epochs
    ADD CONSTRAINT epochs_epoch_key UNIQUE (epoch);


--
-- Name: epochs epochs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.epochs
    ADD CONSTRAINT epochs_pkey PRIMARY KEY (seq);


--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (seq);


--
-- Name: fenced fenced_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.fenced
    ADD CONSTRAINT fenced_pkey PRIMARY KEY (id);


--
-- Name: fenced_reviews fenced_reviews_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.fenced_reviews
    ADD CONSTRAINT fenced_reviews_pkey PRIMARY KEY (fenced_id);


--
-- Name: intents intents_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.intents
    ADD CONSTRAINT intents_pkey PRIMARY KEY (action_key);


--
-- Name: ledger_meta ledger_meta_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ledger_meta
    ADD CONSTRAINT ledger_meta_pkey PRIMARY KEY (one);


--
-- Name: operators operators_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operators
    ADD CONSTRAINT operators_pkey PRIMARY KEY (id);


--
-- Name: pending_events pending_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pending_events
    ADD CONSTRAINT pending_events_pkey PRIMARY KEY (id);


--
-- Name: permit_attempts permit_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permit_attempts
    ADD CONSTRAINT permit_attempts_pkey PRIMARY KEY (action_key);


--
-- Name: permits permits_permit_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permits
    ADD CONSTRAINT permits_permit_id_key UNIQUE (permit_id);


--
-- Name: permits permits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permits
    ADD CONSTRAINT permits_pkey PRIMARY KEY (action_key);


--
-- Name: policy_conditions policy_conditions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_conditions
    ADD CONSTRAINT policy_conditions_pkey PRIMARY KEY (rule_id);


--
-- Name: policy_evals policy_evals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_evals
    ADD CONSTRAINT policy_evals_pkey PRIMARY KEY (action_key);


--
-- Name: policy_rules policy_rules_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_rules
    ADD CONSTRAINT policy_rules_pkey PRIMARY KEY (id);


--
-- Name: principal_names principal_names_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.principal_names
    ADD CONSTRAINT principal_names_pkey PRIMARY KEY (id);


--
-- Name: pruned_events pruned_events_last_seq_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pruned_events
    ADD CONSTRAINT pruned_events_last_seq_key UNIQUE (last_seq);


--
-- Name: pruned_events pruned_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pruned_events
    ADD CONSTRAINT pruned_events_pkey PRIMARY KEY (first_seq);


--
-- Name: reconciliations reconciliations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reconciliations
    ADD CONSTRAINT reconciliations_pkey PRIMARY KEY (action_key);


--
-- Name: report_refusals report_refusals_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.report_refusals
    ADD CONSTRAINT report_refusals_pkey PRIMARY KEY (id);


--
-- Name: reports reports_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reports
    ADD CONSTRAINT reports_pkey PRIMARY KEY (id);


--
-- Name: set_aside set_aside_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.set_aside
    ADD CONSTRAINT set_aside_pkey PRIMARY KEY (id);


--
-- Name: signatures signatures_fact_table_fact_row_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.signatures
    ADD CONSTRAINT signatures_fact_table_fact_row_key UNIQUE (fact_table, fact_row);


--
-- Name: signatures signatures_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.signatures
    ADD CONSTRAINT signatures_pkey PRIMARY KEY (id);


--
-- Name: tollgate_schema tollgate_schema_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tollgate_schema
    ADD CONSTRAINT tollgate_schema_pkey PRIMARY KEY (version);


--
-- Name: votes votes_action_key_name_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.votes
    ADD CONSTRAINT votes_action_key_name_key_key UNIQUE (action_key, name_key);


--
-- Name: votes votes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.votes
    ADD CONSTRAINT votes_pkey PRIMARY KEY (id);


--
-- Name: agent_names agent_names_pkey; Type: CONSTRAINT; Schema: tollgate_private; Owner: -
--

ALTER TABLE ONLY tollgate_private.agent_names
    ADD CONSTRAINT agent_names_pkey PRIMARY KEY (role, agent);


--
-- Name: conflicts conflicts_pkey; Type: CONSTRAINT; Schema: tollgate_private; Owner: -
--

ALTER TABLE ONLY tollgate_private.conflicts
    ADD CONSTRAINT conflicts_pkey PRIMARY KEY (id);


--
-- Name: fact_events fact_events_pkey; Type: CONSTRAINT; Schema: tollgate_private; Owner: -
--

ALTER TABLE ONLY tollgate_private.fact_events
    ADD CONSTRAINT fact_events_pkey PRIMARY KEY (fact_table, type);


--
-- Name: fact_hash_cols fact_hash_cols_pkey; Type: CONSTRAINT; Schema: tollgate_private; Owner: -
--

ALTER TABLE ONLY tollgate_private.fact_hash_cols
    ADD CONSTRAINT fact_hash_cols_pkey PRIMARY KEY (fact_table, n);


--
-- Name: guard_writing guard_writing_pkey; Type: CONSTRAINT; Schema: tollgate_private; Owner: -
--

ALTER TABLE ONLY tollgate_private.guard_writing
    ADD CONSTRAINT guard_writing_pkey PRIMARY KEY (txid);


--
-- Name: payloads payloads_pkey; Type: CONSTRAINT; Schema: tollgate_private; Owner: -
--

ALTER TABLE ONLY tollgate_private.payloads
    ADD CONSTRAINT payloads_pkey PRIMARY KEY (action_key);


--
-- Name: sealing sealing_pkey; Type: CONSTRAINT; Schema: tollgate_private; Owner: -
--

ALTER TABLE ONLY tollgate_private.sealing
    ADD CONSTRAINT sealing_pkey PRIMARY KEY (txid);


--
-- Name: action_index_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX action_index_open ON public.action_index USING btree (stage, deadline_ms) WHERE (stage = ANY (ARRAY['pending'::text, 'approved'::text, 'executing'::text, 'uncertain'::text]));


--
-- Name: events_fact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_fact ON public.events USING btree (fact_table, fact_row);


--
-- Name: events_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX events_key ON public.events USING btree (action_key, seq);


--
-- Name: fenced_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX fenced_key ON public.fenced USING btree (action_key);


--
-- Name: pending_events_fact; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX pending_events_fact ON public.pending_events USING btree (fact_table, fact_row);


--
-- Name: pending_events_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX pending_events_key ON public.pending_events USING btree (action_key, id);


--
-- Name: policy_rules_pattern; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX policy_rules_pattern ON public.policy_rules USING btree (pattern, id);


--
-- Name: principal_names_pair; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX principal_names_pair ON public.principal_names USING btree (who_key, agent_key, id);


--
-- Name: report_refusals_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX report_refusals_key ON public.report_refusals USING btree (action_key, id);


--
-- Name: reports_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reports_key ON public.reports USING btree (action_key, id);


--
-- Name: reports_one_accepted; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX reports_one_accepted ON public.reports USING btree (action_key) WHERE (kind = 'accepted'::text);


--
-- Name: set_aside_key; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX set_aside_key ON public.set_aside USING btree (action_key, id);


--
-- Name: signatures_once; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX signatures_once ON public.signatures USING btree (signature);


--
-- Name: conflicts_key; Type: INDEX; Schema: tollgate_private; Owner: -
--

CREATE INDEX conflicts_key ON tollgate_private.conflicts USING btree (action_key);


--
-- Name: action_index action_index_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER action_index_kept BEFORE DELETE ON public.action_index FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: action_index action_index_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER action_index_no_truncate BEFORE TRUNCATE ON public.action_index FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: agent_tokens agent_tokens_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER agent_tokens_append_only BEFORE DELETE OR UPDATE ON public.agent_tokens FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: agent_tokens agent_tokens_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER agent_tokens_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.agent_tokens FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: approval_requests approval_requests_agent_is_role; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER approval_requests_agent_is_role BEFORE INSERT ON public.approval_requests FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();


--
-- Name: approval_requests approval_requests_agent_name; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER approval_requests_agent_name BEFORE INSERT ON public.approval_requests FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_agent_name();


--
-- Name: approval_requests approval_requests_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER approval_requests_append_only BEFORE DELETE OR UPDATE ON public.approval_requests FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: approval_requests approval_requests_at_database_time; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER approval_requests_at_database_time BEFORE INSERT ON public.approval_requests FOR EACH ROW EXECUTE FUNCTION tollgate_private.at_database_time('requested_ms', 'an approval request');


--
-- Name: approval_requests approval_requests_committed_by_an_event; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER approval_requests_committed_by_an_event AFTER INSERT ON public.approval_requests DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();


--
-- Name: approval_requests approval_requests_follow_rules; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER approval_requests_follow_rules BEFORE INSERT ON public.approval_requests FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_approval_request();


--
-- Name: approval_requests approval_requests_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER approval_requests_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.approval_requests FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: archived_keys archived_keys_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER archived_keys_append_only BEFORE DELETE OR UPDATE ON public.archived_keys FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: archived_keys archived_keys_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER archived_keys_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.archived_keys FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: archives archives_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER archives_append_only BEFORE DELETE OR UPDATE ON public.archives FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: archives archives_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER archives_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.archives FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: chain_head chain_head_forward; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER chain_head_forward BEFORE DELETE OR UPDATE ON public.chain_head FOR EACH ROW EXECUTE FUNCTION public.tollgate_head_forward();


--
-- Name: chain_head chain_head_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER chain_head_no_truncate BEFORE TRUNCATE ON public.chain_head FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: conflict_reviews conflict_reviews_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER conflict_reviews_append_only BEFORE DELETE OR UPDATE ON public.conflict_reviews FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: conflict_reviews conflict_reviews_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER conflict_reviews_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.conflict_reviews FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: decisions decisions_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER decisions_append_only BEFORE DELETE OR UPDATE ON public.decisions FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: decisions decisions_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER decisions_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.decisions FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: epochs epochs_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER epochs_append_only BEFORE DELETE OR UPDATE ON public.epochs FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: epochs epochs_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER epochs_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.epochs FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: events events_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER events_append_only BEFORE DELETE OR UPDATE ON public.events FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: events events_commit_own_facts; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER events_commit_own_facts BEFORE INSERT ON public.events FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_event();


--
-- Name: events events_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER events_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.events FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: events events_notify; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER events_notify AFTER INSERT ON public.events FOR EACH ROW EXECUTE FUNCTION public.tollgate_notify();


--
-- Name: fenced fenced_agent_name; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fenced_agent_name BEFORE INSERT ON public.fenced FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_agent_name();


--
-- Name: fenced fenced_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fenced_append_only BEFORE DELETE OR UPDATE ON public.fenced FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: fenced fenced_committed_by_an_event; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER fenced_committed_by_an_event AFTER INSERT ON public.fenced DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_fact_committed();


--
-- Name: fenced fenced_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fenced_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.fenced FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: fenced_reviews fenced_reviews_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fenced_reviews_append_only BEFORE DELETE OR UPDATE ON public.fenced_reviews FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: fenced_reviews fenced_reviews_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER fenced_reviews_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.fenced_reviews FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: intents intents_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER intents_append_only BEFORE DELETE OR UPDATE ON public.intents FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: intents intents_index; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER intents_index AFTER INSERT ON public.intents FOR EACH ROW EXECUTE FUNCTION public.tollgate_index_intent();


--
-- Name: intents intents_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER intents_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.intents FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: ledger_meta ledger_meta_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_meta_append_only BEFORE DELETE OR UPDATE ON public.ledger_meta FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: ledger_meta ledger_meta_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER ledger_meta_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.ledger_meta FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: operators operators_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER operators_append_only BEFORE DELETE OR UPDATE ON public.operators FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: operators operators_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER operators_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.operators FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: pending_events pending_events_commit_own_facts; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER pending_events_commit_own_facts BEFORE INSERT ON public.pending_events FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_event();


--
-- Name: pending_events pending_events_kept; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER pending_events_kept BEFORE DELETE OR UPDATE ON public.pending_events FOR EACH ROW EXECUTE FUNCTION public.tollgate_pending_kept();


--
-- Name: pending_events pending_events_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER pending_events_no_truncate BEFORE TRUNCATE ON public.pending_events FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: pending_events pending_events_notify; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER pending_events_notify AFTER INSERT ON public.pending_events FOR EACH ROW EXECUTE FUNCTION public.tollgate_notify();


--
-- Name: permit_attempts permit_attempts_agent_is_role; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permit_attempts_agent_is_role BEFORE INSERT ON public.permit_attempts FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();


--
-- Name: permit_attempts permit_attempts_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permit_attempts_append_only BEFORE DELETE OR UPDATE ON public.permit_attempts FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: permit_attempts permit_attempts_committed_by_an_event; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER permit_attempts_committed_by_an_event AFTER INSERT ON public.permit_attempts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_fact_committed();


--
-- Name: permit_attempts permit_attempts_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permit_attempts_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.permit_attempts FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: permit_attempts permit_attempts_own_permit; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permit_attempts_own_permit BEFORE INSERT ON public.permit_attempts FOR EACH ROW EXECUTE FUNCTION tollgate_private.check_attempt_permit();


--
-- Name: permits permits_agent_is_role; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permits_agent_is_role BEFORE INSERT ON public.permits FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();


--
-- Name: permits permits_agent_name; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permits_agent_name BEFORE INSERT ON public.permits FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_agent_name();


--
-- Name: permits permits_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permits_append_only BEFORE DELETE OR UPDATE ON public.permits FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: permits permits_at_database_time; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permits_at_database_time BEFORE INSERT ON public.permits FOR EACH ROW EXECUTE FUNCTION tollgate_private.at_database_time('issued_ms', 'a permit');


--
-- Name: permits permits_committed_by_an_event; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER permits_committed_by_an_event AFTER INSERT ON public.permits DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();


--
-- Name: permits permits_follow_rules; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permits_follow_rules BEFORE INSERT ON public.permits FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_permit();


--
-- Name: permits permits_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER permits_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.permits FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: policy_conditions policy_conditions_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_conditions_append_only BEFORE DELETE OR UPDATE ON public.policy_conditions FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: policy_conditions policy_conditions_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_conditions_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.policy_conditions FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: policy_evals policy_evals_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_evals_append_only BEFORE DELETE OR UPDATE ON public.policy_evals FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: policy_evals policy_evals_committed_by_an_event; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER policy_evals_committed_by_an_event AFTER INSERT ON public.policy_evals DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();


--
-- Name: policy_evals policy_evals_follow_rules; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_evals_follow_rules BEFORE INSERT ON public.policy_evals FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_policy_eval();


--
-- Name: policy_evals policy_evals_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_evals_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.policy_evals FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: policy_rules policy_rules_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_rules_append_only BEFORE DELETE OR UPDATE ON public.policy_rules FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: policy_rules policy_rules_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER policy_rules_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.policy_rules FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: principal_names principal_names_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER principal_names_append_only BEFORE DELETE OR UPDATE ON public.principal_names FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: principal_names principal_names_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER principal_names_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.principal_names FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: pruned_events pruned_events_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER pruned_events_append_only BEFORE DELETE OR UPDATE ON public.pruned_events FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: pruned_events pruned_events_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER pruned_events_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.pruned_events FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: reconciliations reconciliations_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER reconciliations_append_only BEFORE DELETE OR UPDATE ON public.reconciliations FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: reconciliations reconciliations_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER reconciliations_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.reconciliations FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: report_refusals report_refusals_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER report_refusals_append_only BEFORE DELETE OR UPDATE ON public.report_refusals FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: report_refusals report_refusals_committed_by_an_event; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER report_refusals_committed_by_an_event AFTER INSERT ON public.report_refusals DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_fact_committed();


--
-- Name: report_refusals report_refusals_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER report_refusals_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.report_refusals FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: reports reports_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER reports_append_only BEFORE DELETE OR UPDATE ON public.reports FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: reports reports_at_database_time; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER reports_at_database_time BEFORE INSERT ON public.reports FOR EACH ROW EXECUTE FUNCTION tollgate_private.at_database_time('at_ms', 'a report');


--
-- Name: reports reports_committed_by_an_event; Type: TRIGGER; Schema: public; Owner: -
--

CREATE CONSTRAINT TRIGGER reports_committed_by_an_event AFTER INSERT ON public.reports DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();


--
-- Name: reports reports_follow_rules; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER reports_follow_rules BEFORE INSERT ON public.reports FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_report();


--
-- Name: reports reports_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER reports_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.reports FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: set_aside set_aside_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER set_aside_append_only BEFORE DELETE OR UPDATE ON public.set_aside FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: set_aside set_aside_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER set_aside_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.set_aside FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: signatures signatures_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER signatures_append_only BEFORE DELETE OR UPDATE ON public.signatures FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: signatures signatures_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER signatures_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.signatures FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: votes votes_append_only; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER votes_append_only BEFORE DELETE OR UPDATE ON public.votes FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: votes votes_no_truncate; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER votes_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.votes FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: conflicts conflicts_agent_is_role; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE TRIGGER conflicts_agent_is_role BEFORE INSERT ON tollgate_private.conflicts FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();


--
-- Name: conflicts conflicts_agent_name; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE TRIGGER conflicts_agent_name BEFORE INSERT ON tollgate_private.conflicts FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_agent_name();


--
-- Name: conflicts conflicts_append_only; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE TRIGGER conflicts_append_only BEFORE DELETE OR UPDATE ON tollgate_private.conflicts FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: conflicts conflicts_committed_by_an_event; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE CONSTRAINT TRIGGER conflicts_committed_by_an_event AFTER INSERT ON tollgate_private.conflicts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_fact_committed();


--
-- Name: conflicts conflicts_no_truncate; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE TRIGGER conflicts_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON tollgate_private.conflicts FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: payloads payloads_agent_is_role; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE TRIGGER payloads_agent_is_role BEFORE INSERT ON tollgate_private.payloads FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();


--
-- Name: payloads payloads_agent_name; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE TRIGGER payloads_agent_name BEFORE INSERT ON tollgate_private.payloads FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_agent_name();


--
-- Name: payloads payloads_append_only; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE TRIGGER payloads_append_only BEFORE DELETE OR UPDATE ON tollgate_private.payloads FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: payloads payloads_are_canonical; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE TRIGGER payloads_are_canonical BEFORE INSERT ON tollgate_private.payloads FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_payload_row();


--
-- Name: payloads payloads_committed_by_an_event; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE CONSTRAINT TRIGGER payloads_committed_by_an_event AFTER INSERT ON tollgate_private.payloads DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();


--
-- Name: payloads payloads_no_truncate; Type: TRIGGER; Schema: tollgate_private; Owner: -
--

CREATE TRIGGER payloads_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON tollgate_private.payloads FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();


--
-- Name: approval_requests approval_requests_action_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.approval_requests
    ADD CONSTRAINT approval_requests_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);


--
-- Name: conflict_reviews conflict_reviews_conflict_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.conflict_reviews
    ADD CONSTRAINT conflict_reviews_conflict_id_fkey FOREIGN KEY (conflict_id) REFERENCES tollgate_private.conflicts(id);


--
-- Name: decisions decisions_action_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.decisions
    ADD CONSTRAINT decisions_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.approval_requests(action_key);


--
-- Name: fenced_reviews fenced_reviews_fenced_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.fenced_reviews
    ADD CONSTRAINT fenced_reviews_fenced_id_fkey FOREIGN KEY (fenced_id) REFERENCES public.fenced(id);


--
-- Name: permits permits_action_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permits
    ADD CONSTRAINT permits_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);


--
-- Name: policy_conditions policy_conditions_rule_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_conditions
    ADD CONSTRAINT policy_conditions_rule_id_fkey FOREIGN KEY (rule_id) REFERENCES public.policy_rules(id);


--
-- Name: policy_evals policy_evals_action_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_evals
    ADD CONSTRAINT policy_evals_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);


--
-- Name: policy_evals policy_evals_rule_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.policy_evals
    ADD CONSTRAINT policy_evals_rule_id_fkey FOREIGN KEY (rule_id) REFERENCES public.policy_rules(id);


--
-- Name: reconciliations reconciliations_action_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reconciliations
    ADD CONSTRAINT reconciliations_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.permits(action_key);


--
-- Name: reports reports_action_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reports
    ADD CONSTRAINT reports_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.permits(action_key);


--
-- Name: votes votes_action_key_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.votes
    ADD CONSTRAINT votes_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.approval_requests(action_key);


--
-- Name: conflicts conflicts_action_key_fkey; Type: FK CONSTRAINT; Schema: tollgate_private; Owner: -
--

ALTER TABLE ONLY tollgate_private.conflicts
    ADD CONSTRAINT conflicts_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);


--
-- Name: payloads payloads_action_key_fkey; Type: FK CONSTRAINT; Schema: tollgate_private; Owner: -
--

ALTER TABLE ONLY tollgate_private.payloads
    ADD CONSTRAINT payloads_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);


--
-- Name: SCHEMA public; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA public TO tollgate_agent;
GRANT USAGE ON SCHEMA public TO tollgate_operator;


--
-- Name: FUNCTION tollgate_action_body(p_canonical text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_action_body(p_canonical text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_action_target(p_canonical text, p_target_sha256 text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_action_target(p_canonical text, p_target_sha256 text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_agent_allow(p_role text, p_agent text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_agent_allow(p_role text, p_agent text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_agent_allow(p_role text, p_agent text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_agent_names(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_agent_names() FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_agent_names() TO tollgate_operator;


--
-- Name: FUNCTION tollgate_agent_revoke(p_role text, p_agent text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_agent_revoke(p_role text, p_agent text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_agent_revoke(p_role text, p_agent text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint, p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint, p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint, p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint, p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_append_events(p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], OUT o_seq bigint, OUT o_hash text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_append_events(p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], OUT o_seq bigint, OUT o_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_append_events(p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], OUT o_seq bigint, OUT o_hash text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_append_events(p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], OUT o_seq bigint, OUT o_hash text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_cel_action(p_kind text, p_target text, p_agent text, p_body text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_action(p_kind text, p_target text, p_agent text, p_body text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_arith(op text, a jsonb, b jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_arith(op text, a jsonb, b jsonb) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_body_of(p jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_body_of(p jsonb) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_body_path(n jsonb, act jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_body_path(n jsonb, act jsonb) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_cmp(a jsonb, b jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_cmp(a jsonb, b jsonb) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_context(ctx jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_context(ctx jsonb) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_d(x double precision); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_d(x double precision) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_eq(a jsonb, b jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_eq(a jsonb, b jsonb) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_err(p_msg text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_err(p_msg text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_eval(n jsonb, ctx jsonb, act jsonb, now_ns numeric); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_eval(n jsonb, ctx jsonb, act jsonb, now_ns numeric) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_f8(p jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_f8(p jsonb) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_getter(fn text, t jsonb, tz jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_getter(fn text, t jsonb, tz jsonb) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_of(p jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_of(p jsonb) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_cel_timestamp(p text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_cel_timestamp(p text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_check_approval_request(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_check_approval_request() FROM PUBLIC;


--
-- Name: FUNCTION tollgate_check_permit(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_check_permit() FROM PUBLIC;


--
-- Name: FUNCTION tollgate_check_policy_eval(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_check_policy_eval() FROM PUBLIC;


--
-- Name: FUNCTION tollgate_check_report(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_check_report() FROM PUBLIC;


--
-- Name: FUNCTION tollgate_clock_ok(p_at_ms bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_clock_ok(p_at_ms bigint) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_condition_holds(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_condition_holds(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_condition_holds_cel(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_condition_holds_cel(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_copying(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_copying() FROM PUBLIC;


--
-- Name: FUNCTION tollgate_drop_forged_vote(p_id bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_drop_forged_vote(p_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_drop_forged_vote(p_id bigint) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_flush(p_events_first boolean, p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], p_index_keys text[], p_index_targets text[], OUT o_seq bigint, OUT o_hash text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_flush(p_events_first boolean, p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], p_index_keys text[], p_index_targets text[], OUT o_seq bigint, OUT o_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_flush(p_events_first boolean, p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], p_index_keys text[], p_index_targets text[], OUT o_seq bigint, OUT o_hash text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_flush(p_events_first boolean, p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], p_index_keys text[], p_index_targets text[], OUT o_seq bigint, OUT o_hash text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_go_json(p text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_go_json(p text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_guard_writing(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_guard_writing() FROM PUBLIC;


--
-- Name: TABLE agent_tokens; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.agent_tokens TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_agent_tokens(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_agent_tokens(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_agent_tokens(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE approval_requests; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.approval_requests TO tollgate_agent;
GRANT SELECT ON TABLE public.approval_requests TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_approval_requests(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_approval_requests(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_approval_requests(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_approval_requests(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE archives; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.archives TO tollgate_agent;
GRANT SELECT ON TABLE public.archives TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_archives(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_archives(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_archives(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE conflict_reviews; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.conflict_reviews TO tollgate_agent;
GRANT SELECT ON TABLE public.conflict_reviews TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_conflict_reviews(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_conflict_reviews(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_conflict_reviews(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE conflicts; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.conflicts TO tollgate_agent;
GRANT SELECT ON TABLE public.conflicts TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_conflicts(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_conflicts(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_conflicts(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_conflicts(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE decisions; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.decisions TO tollgate_agent;
GRANT SELECT ON TABLE public.decisions TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_decisions(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_decisions(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_decisions(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE epochs; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.epochs TO tollgate_agent;
GRANT SELECT ON TABLE public.epochs TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_epochs(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_epochs(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_epochs(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE fenced; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.fenced TO tollgate_agent;
GRANT SELECT ON TABLE public.fenced TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_fenced(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_fenced(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_fenced(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_fenced(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE fenced_reviews; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.fenced_reviews TO tollgate_agent;
GRANT SELECT ON TABLE public.fenced_reviews TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_fenced_reviews(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_fenced_reviews(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_fenced_reviews(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE operators; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.operators TO tollgate_agent;
GRANT SELECT ON TABLE public.operators TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_operators(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_operators(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_operators(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE payloads; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.payloads TO tollgate_agent;
GRANT SELECT ON TABLE public.payloads TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_payloads(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_payloads(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_payloads(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_payloads(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE permit_attempts; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.permit_attempts TO tollgate_agent;
GRANT SELECT ON TABLE public.permit_attempts TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_permit_attempts(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_permit_attempts(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_permit_attempts(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_permit_attempts(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE permits; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.permits TO tollgate_agent;
GRANT SELECT ON TABLE public.permits TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_permits(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_permits(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_permits(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_permits(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE policy_evals; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.policy_evals TO tollgate_agent;
GRANT SELECT ON TABLE public.policy_evals TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_policy_evals(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_policy_evals(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_policy_evals(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_policy_evals(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE policy_rules; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.policy_rules TO tollgate_agent;
GRANT SELECT ON TABLE public.policy_rules TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_policy_rules(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_policy_rules(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_policy_rules(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE principal_names; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.principal_names TO tollgate_agent;
GRANT SELECT ON TABLE public.principal_names TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_principal_names(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_principal_names(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_principal_names(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE reconciliations; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.reconciliations TO tollgate_agent;
GRANT SELECT ON TABLE public.reconciliations TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_reconciliations(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_reconciliations(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_reconciliations(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE report_refusals; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.report_refusals TO tollgate_agent;
GRANT SELECT ON TABLE public.report_refusals TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_report_refusals(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_report_refusals(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_report_refusals(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_report_refusals(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE reports; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.reports TO tollgate_agent;
GRANT SELECT ON TABLE public.reports TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_reports(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_reports(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_reports(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_reports(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE set_aside; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.set_aside TO tollgate_agent;
GRANT SELECT ON TABLE public.set_aside TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_set_aside(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_set_aside(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_set_aside(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE signatures; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.signatures TO tollgate_agent;
GRANT SELECT ON TABLE public.signatures TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_signatures(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_signatures(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_signatures(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: TABLE votes; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.votes TO tollgate_agent;
GRANT SELECT ON TABLE public.votes TO tollgate_operator;


--
-- Name: FUNCTION tollgate_insert_votes(p_cols text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_insert_votes(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_votes(p_cols text[], p_vals text[]) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_lock_head(OUT o_seq bigint, OUT o_hash text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_lock_head(OUT o_seq bigint, OUT o_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_lock_head(OUT o_seq bigint, OUT o_hash text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_lock_key(p_logical text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_lock_key(p_logical text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_lock_key(p_logical text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_lock_key(p_logical text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_make_insert_fact(p_table text, p_roles text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_make_insert_fact(p_table text, p_roles text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_pattern_matches(p_pattern text, p_kind text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_pattern_matches(p_pattern text, p_kind text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_pattern_specificity(p_pattern text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_pattern_specificity(p_pattern text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_record(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_record(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_record(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_record(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_record_intent(p_key text, p_sha256 text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_record_intent(p_key text, p_sha256 text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_record_intent(p_key text, p_sha256 text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_record_intent(p_key text, p_sha256 text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_refresh_index(p_key text, p_target text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_refresh_index(p_key text, p_target text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_refresh_index(p_key text, p_target text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_refresh_index(p_key text, p_target text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_refuse(p_key text, p_msg text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_refuse(p_key text, p_msg text) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_row_hash(p_table text, p_tags text[], p_vals text[]); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_row_hash(p_table text, p_tags text[], p_vals text[]) FROM PUBLIC;


--
-- Name: FUNCTION tollgate_seal(p_through bigint, p_wait_ms bigint); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_seal(p_through bigint, p_wait_ms bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_seal(p_through bigint, p_wait_ms bigint) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_seal(p_through bigint, p_wait_ms bigint) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_sealing(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_sealing() FROM PUBLIC;


--
-- Name: FUNCTION tollgate_set_condition(p_rule bigint, p_ast text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_set_condition(p_rule bigint, p_ast text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_set_condition(p_rule bigint, p_ast text) TO tollgate_operator;


--
-- Name: FUNCTION tollgate_wait_head(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.tollgate_wait_head() FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_wait_head() TO tollgate_operator;


--
-- Name: FUNCTION agent_name_allowed(p_agent text); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.agent_name_allowed(p_agent text) FROM PUBLIC;


--
-- Name: FUNCTION at_database_time(); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.at_database_time() FROM PUBLIC;


--
-- Name: FUNCTION check_agent_is_role(); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.check_agent_is_role() FROM PUBLIC;


--
-- Name: FUNCTION check_attempt_permit(); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.check_attempt_permit() FROM PUBLIC;


--
-- Name: FUNCTION key_finish(p_key text, p_target text, p_agent text, p_now bigint, p_types text[], p_details text[], p_tables text[], p_hashes text[]); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.key_finish(p_key text, p_target text, p_agent text, p_now bigint, p_types text[], p_details text[], p_tables text[], p_hashes text[]) FROM PUBLIC;


--
-- Name: FUNCTION key_new(p_fn text, p_key text, p_logical text, p_epoch text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, OUT o_now bigint, OUT o_go boolean); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.key_new(p_fn text, p_key text, p_logical text, p_epoch text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, OUT o_now bigint, OUT o_go boolean) FROM PUBLIC;


--
-- Name: FUNCTION key_parse(p_fn text, p_key text, p_wait_ms bigint, OUT o_logical text, OUT o_epoch text); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.key_parse(p_fn text, p_key text, p_wait_ms bigint, OUT o_logical text, OUT o_epoch text) FROM PUBLIC;


--
-- Name: FUNCTION lock_key(p_logical text); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.lock_key(p_logical text) FROM PUBLIC;


--
-- Name: FUNCTION others_key(p_logical text); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.others_key(p_logical text) FROM PUBLIC;


--
-- Name: FUNCTION policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) FROM PUBLIC;


--
-- Name: FUNCTION policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) FROM PUBLIC;


--
-- Name: FUNCTION record_write(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_now bigint, OUT o_types text[], OUT o_details text[], OUT o_tables text[], OUT o_hashes text[]); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.record_write(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_now bigint, OUT o_types text[], OUT o_details text[], OUT o_tables text[], OUT o_hashes text[]) FROM PUBLIC;


--
-- Name: FUNCTION seal_pending(); Type: ACL; Schema: tollgate_private; Owner: -
--

REVOKE ALL ON FUNCTION tollgate_private.seal_pending() FROM PUBLIC;


--
-- Name: TABLE action_index; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.action_index TO tollgate_agent;
GRANT SELECT ON TABLE public.action_index TO tollgate_operator;


--
-- Name: TABLE archived_keys; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.archived_keys TO tollgate_agent;
GRANT SELECT ON TABLE public.archived_keys TO tollgate_operator;


--
-- Name: TABLE chain_head; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.chain_head TO tollgate_agent;
GRANT SELECT ON TABLE public.chain_head TO tollgate_operator;


--
-- Name: TABLE events; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.events TO tollgate_agent;
GRANT SELECT ON TABLE public.events TO tollgate_operator;


--
-- Name: TABLE intents; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.intents TO tollgate_agent;
GRANT SELECT ON TABLE public.intents TO tollgate_operator;


--
-- Name: TABLE ledger_meta; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.ledger_meta TO tollgate_agent;
GRANT SELECT ON TABLE public.ledger_meta TO tollgate_operator;


--
-- Name: TABLE pending_events; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.pending_events TO tollgate_agent;
GRANT SELECT ON TABLE public.pending_events TO tollgate_operator;


--
-- Name: TABLE policy_conditions; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.policy_conditions TO tollgate_agent;
GRANT SELECT ON TABLE public.policy_conditions TO tollgate_operator;


--
-- Name: TABLE pruned_events; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.pruned_events TO tollgate_agent;
GRANT SELECT ON TABLE public.pruned_events TO tollgate_operator;


--
-- Name: TABLE tollgate_schema; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT ON TABLE public.tollgate_schema TO tollgate_agent;
GRANT SELECT ON TABLE public.tollgate_schema TO tollgate_operator;


--
-- PostgreSQL database dump complete
--

\unrestrict CWzff0bGACWOTWZN4sJHHcnu5KDezxryqRhfGKagxUXbJxyYEuVzMNjxKTZuiZO


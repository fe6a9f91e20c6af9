-- Schema 34: the database's policy decision reads what will execute,
-- fails closed, and is a function of the rules and the stored facts
-- alone (issues 40 and 41).
--
-- * action.body: a condition may read the stored payload's body when it
--   is one JSON object (approvals.ParseBody): an integral number (a
--   numeric of scale 0) is an int, one beyond int64 makes every read of
--   the body an error; any other number is a double, read from its
--   decimal text (an underflow to zero is an error, as in the client).
--   A redacted payload keeps no body: action.body is absent.
-- * Fail closed (semantics version 2, approvals.DecideUnder): a condition
--   that reads a field the action did not send, or fails for any other
--   reason, gives the most restrictive outcome of its own rule and every
--   rule that could still match after it (deny, then approval with the
--   highest quorum, then auto; among equals the earliest), the default
--   included when no unconditional rule ends the list.
-- * Session settings: every function on the decision path pins each
--   setting whose value could change a result. A context number is kept
--   as the canonical context's decimal (jsonb numeric) and never passes
--   through float8's text (which followed extra_float_digits: with -15,
--   5400 read as 5000); a double computed by arithmetic is written with
--   extra_float_digits pinned to 3, the shortest exact form. Zone
--   abbreviations (getHours("EST")) follow timezone_abbreviations, pinned
--   to Default; TimeZone, DateStyle, IntervalStyle, lc_numeric and
--   standard_conforming_strings (which decides how the evaluator's own
--   string literals, regular expressions and LIKE patterns parse) are
--   pinned as well. The evaluator's helpers lose EXECUTE for PUBLIC: an
--   agent's session can no longer run (and so parse and cache) them
--   under settings of its own outside the pinned entry points.

-- A context value (canonical JSON: a string, a number, a boolean or a
-- list of strings) as a CEL value: every number is a double, kept as the
-- canonical decimal, which float8's input reads exactly as Go does.
CREATE OR REPLACE FUNCTION tollgate_cel_of(p jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
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

-- A value of a body (already checked by tollgate_cel_action) as a CEL
-- value: an object is a map ["m", object].
CREATE FUNCTION tollgate_cel_body_of(p jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
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

-- The action a condition reads: kind, target (NULL when the database
-- cannot know it), agent, and the body when it is one JSON object, with
-- body_err when one of its numbers cannot be read (an integral number
-- beyond int64, a double out of range), which every read of the body
-- then returns, as approvals.ParseBody does.
CREATE FUNCTION tollgate_cel_action(p_kind text, p_target text, p_agent text, p_body text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
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
END $$;

-- A path into the body (["body", "a", "b"] or ["hasbody", ...]) as CEL
-- reads it: every step but a has()'s last must exist.
CREATE FUNCTION tollgate_cel_body_path(n jsonb, act jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
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

-- Equality: a map from the body equals another by value.
CREATE OR REPLACE FUNCTION tollgate_cel_eq(a jsonb, b jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
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

-- The evaluator of schema 11, with the body's nodes, and size and in
-- over a body's map.
CREATE OR REPLACE FUNCTION tollgate_cel_eval(n jsonb, ctx jsonb, act jsonb, now_ns numeric) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
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
END $$;

-- Whether a condition holds: true, false, or NULL when it cannot be
-- evaluated, a field it reads missing included (semantics 2: the
-- decision fails closed, tollgate_private.policy_decide_at).
CREATE OR REPLACE FUNCTION tollgate_condition_holds_cel(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
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

-- The decision approvals.Decide makes (semantics 2) for an action with
-- its body: the newest rule of each pattern and condition, in order
-- (priority, specificity, a condition before none, oldest first), the
-- first whose pattern matches and whose condition holds; a condition
-- that cannot be evaluated gives the most restrictive of its rule and
-- the candidates after it (the default too when no unconditional rule
-- ends them); no match gives the default (approval by one operator
-- within 24 hours). On a signed ledger a rule without a signature is
-- not policy.
CREATE FUNCTION tollgate_private.policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint,
    OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
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
REVOKE ALL ON FUNCTION tollgate_private.policy_decide_at(text, text, text, text, text, bigint) FROM PUBLIC;

-- Without a body (the one-call guard decides only kinds no conditional
-- rule matches).
CREATE OR REPLACE FUNCTION tollgate_private.policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint,
    OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern FROM tollgate_private.policy_decide_at(p_kind, p_target, p_agent, p_context, NULL, p_at_ms) d
$$;

-- The decision at the client's time and, when that is more than a
-- second from the database's clock, at the database's (schema 26).
CREATE FUNCTION tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint,
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
REVOKE ALL ON FUNCTION tollgate_policy_decide(text, text, text, text, text, bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint,
    OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text)
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT d.o_mode, d.o_rule, d.o_ttl_ms, d.o_approvers, d.o_pattern FROM tollgate_policy_decide(p_kind, p_target, p_agent, p_context, NULL::text, p_at_ms) d
$$;

-- The body a rule reads: the stored payload's, none when redacted.
CREATE FUNCTION tollgate_action_body(p_canonical text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_canonical IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN p_canonical::jsonb ->> 'body';
EXCEPTION WHEN OTHERS THEN
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION tollgate_check_policy_eval() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
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

-- Pin, on every function of the decision path, each setting whose value
-- a session could choose to change a result; take the evaluator's
-- helpers from PUBLIC, so that they run (and are parsed and planned)
-- only under those pins.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE (n.nspname = 'public' AND p.proname IN ('tollgate_policy_decide', 'tollgate_check_policy_eval', 'tollgate_condition_holds',
                'tollgate_check_approval_request', 'tollgate_check_permit', 'tollgate_guard', 'tollgate_record'))
           OR (n.nspname = 'tollgate_private' AND p.proname = 'policy_decide_at')
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET extra_float_digits = 3 SET timezone_abbreviations = %L SET TimeZone = %L SET DateStyle = %L'
            ' SET IntervalStyle = %L SET lc_numeric = %L SET standard_conforming_strings = on', f, 'Default', 'UTC', 'ISO, MDY', 'postgres', 'C');
    END LOOP;
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND (p.proname LIKE 'tollgate\_cel\_%' OR p.proname IN ('tollgate_condition_holds_cel', 'tollgate_condition_holds',
            'tollgate_pattern_matches', 'tollgate_pattern_specificity', 'tollgate_action_target', 'tollgate_action_body'))
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
END $$;

-- The database enforces the policy (SPEC 10, issues 25 and 28). Until
-- now an agent's role could call tollgate_insert_policy_evals with mode
-- 'auto' for its own key whatever the rules said, insert a permit for a
-- key pending approval or denied, choose the time a schedule window
-- reads, or file a report under another agent's permit: the insert
-- functions stored whatever values they were given, and the rules were
-- applied by the client. From this version BEFORE INSERT triggers, run
-- as the schema's owner with search_path pinned, refuse (SQLSTATE TG002)
-- every such fact that does not follow from the ledger's own facts and
-- rules:
--
--   policy_evals      must be the server's own decision (mode, rule, TTL,
--                     quorum, pattern) over the rules in force, in the
--                     order approvals.Decide applies them, for the key's
--                     stored payload and context, at a time within the
--                     allowed skew of the server's clock;
--   approval_requests need an approval-mode evaluation and its TTL;
--   permits           need an auto evaluation, or an approval-mode one
--                     with a committed approval that met its quorum
--                     before the request expired, and a key of the
--                     active epoch;
--   reports           carry the key's permit id, come from the role that
--                     was issued the permit (or an operator), and are
--                     accepted only within the lease.
--
-- Rule conditions are CEL. The database cannot parse CEL; the client
-- that sets a rule stores beside it a translation into a small, closed
-- JSON form (approvals.PortableAST), which tollgate_cel_eval below
-- interprets with CEL's semantics, errors included, without dynamic SQL.
-- verify re-derives each translation from the rule's text.

-- A condition's translation, one per rule, written with the rule.
CREATE TABLE policy_conditions (
    rule_id BIGINT PRIMARY KEY REFERENCES policy_rules(id),
    ast     TEXT COLLATE "C" NOT NULL CHECK (length(ast) <= 65536)
);
CREATE TRIGGER policy_conditions_append_only BEFORE UPDATE OR DELETE ON policy_conditions FOR EACH ROW EXECUTE FUNCTION tollgate_append_only();
CREATE TRIGGER policy_conditions_no_truncate BEFORE UPDATE OR DELETE OR TRUNCATE ON policy_conditions FOR EACH STATEMENT EXECUTE FUNCTION tollgate_append_only();
GRANT SELECT ON policy_conditions TO tollgate_agent, tollgate_operator;

-- The role that was issued a permit: the one role (besides operators)
-- whose reports under it are accepted. Not part of the row hash, as on
-- decisions. Permits issued before this version record no role ('').
ALTER TABLE permits ADD COLUMN db_role TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE permits ALTER COLUMN db_role SET DEFAULT session_user;

CREATE FUNCTION tollgate_set_condition(p_rule bigint, p_ast text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
REVOKE ALL ON FUNCTION tollgate_set_condition(bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_set_condition(bigint, text) TO tollgate_operator;

-- The evaluator. Its functions are pure and run as their caller, so
-- they take the caller's search_path (the owner's pinned one, from the
-- triggers) rather than setting their own: a function that sets it is
-- never inlined, and a path that changes at each nested call makes
-- PL/pgSQL re-plan its statements, which cost a condition ten times
-- its work. A value is a JSON array tagged by its type:
-- ["b", bool] ["i", int64] ["d", double] ["s", text] ["l", [value...]]
-- ["t", nanoseconds since 1970] ["n"] (null), or an error ["e", text],
-- which, as in CEL, && and || absorb when the other side decides.
CREATE FUNCTION tollgate_cel_err(p_msg text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT jsonb_build_array('e', p_msg) $$;

-- A context value (canonical JSON: a string, a number, a boolean or a
-- list of strings) as a CEL value: every number is a double.
CREATE FUNCTION tollgate_cel_of(p jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    items jsonb := '[]'::jsonb;
    i int;
BEGIN
    CASE jsonb_typeof(p)
    WHEN 'string' THEN RETURN jsonb_build_array('s', p);
    WHEN 'number' THEN RETURN jsonb_build_array('d', to_jsonb((p #>> '{}')::float8));
    WHEN 'boolean' THEN RETURN jsonb_build_array('b', p);
    WHEN 'array' THEN
        FOR i IN 0 .. jsonb_array_length(p) - 1 LOOP
            items := items || jsonb_build_array(jsonb_build_array('s', p -> i));
        END LOOP;
        RETURN jsonb_build_array('l', items);
    ELSE RETURN jsonb_build_array('n');
    END CASE;
END $$;

CREATE FUNCTION tollgate_cel_f8(p jsonb) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$ SELECT (p ->> 1)::float8 $$;

-- Equality with CEL's heterogeneous semantics: numbers compare by value
-- across int and double, other values of different types are unequal.
CREATE FUNCTION tollgate_cel_eq(a jsonb, b jsonb) RETURNS jsonb
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
            RETURN jsonb_build_array('b', (a ->> 1)::bigint = (b ->> 1)::bigint);
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

-- Ordering: -1, 0 or 1 as ["i", n], or an error for types CEL does not
-- order against each other.
CREATE FUNCTION tollgate_cel_cmp(a jsonb, b jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
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

-- A double as a value; PostgreSQL raises where IEEE arithmetic gives an
-- infinity, which the caller turns into CEL's infinity or NaN.
CREATE FUNCTION tollgate_cel_d(x float8) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT jsonb_build_array('d', to_jsonb(x)) $$;

CREATE FUNCTION tollgate_cel_arith(op text, a jsonb, b jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
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

-- timestamp(string): RFC 3339, as Go's time.Parse(time.RFC3339) reads it.
CREATE FUNCTION tollgate_cel_timestamp(p text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
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
END $$;

-- The timestamp getters, in UTC or the named zone (an IANA name or a
-- fixed offset ±HH:MM), numbered as CEL numbers them.
CREATE FUNCTION tollgate_cel_getter(fn text, t jsonb, tz jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
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
END $$;

-- One node of a condition (approvals.Portable) over the action (kind,
-- target, agent: target NULL when the database cannot know it), its
-- context (each field already a value: tollgate_cel_context) and the time
-- in nanoseconds. Nothing here builds SQL from a
-- condition: an operator's rule cannot run statements as the owner.
CREATE FUNCTION tollgate_cel_eval(n jsonb, ctx jsonb, act jsonb, now_ns numeric) RETURNS jsonb
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
    WHEN 'act' THEN
        IF act ? (n ->> 1) THEN
            IF jsonb_typeof(act -> (n ->> 1)) = 'null' THEN
                RAISE EXCEPTION 'the action''s target is not known to the database (a redacted payload)' USING ERRCODE = 'TG002';
            END IF;
            RETURN jsonb_build_array('s', act -> (n ->> 1));
        END IF;
        RETURN tollgate_cel_err('no such key: ' || (n ->> 1));
    WHEN 'hasact' THEN RETURN jsonb_build_array('b', act ? (n ->> 1));
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
    WHEN 'size' THEN
        IF a ->> 0 = 's' THEN RETURN jsonb_build_array('i', length(a ->> 1)); END IF;
        IF a ->> 0 = 'l' THEN RETURN jsonb_build_array('i', jsonb_array_length(a -> 1)); END IF;
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

-- A context (canonical JSON) with each field as a value, converted once
-- for every condition of a decision.
CREATE FUNCTION tollgate_cel_context(ctx jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
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

-- Whether a condition holds: true, false, or NULL when it cannot be
-- evaluated. An error with a context field the condition reads missing
-- from the action is false (approvals.Condition.eval): write has() to
-- say otherwise.
CREATE FUNCTION tollgate_condition_holds_cel(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric) RETURNS boolean
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
    IF r ->> 0 = 'e' AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(p_ast -> 'reads') f WHERE NOT ctx ? f) THEN
        RETURN false;
    END IF;
    RETURN NULL;
END $$;

-- Whether a condition holds over a context as it was sent (the
-- differential tests call this one).
CREATE FUNCTION tollgate_condition_holds(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric) RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT tollgate_condition_holds_cel(p_ast, tollgate_cel_context(ctx), act, now_ns) $$;

-- Whether a kind pattern (an exact kind, or a glob of * and ?) matches.
CREATE FUNCTION tollgate_pattern_matches(p_pattern text, p_kind text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_pattern = p_kind OR (p_pattern ~ '[*?]' AND p_kind LIKE
        replace(replace(replace(replace(replace(p_pattern, '\', '\\'), '%', '\%'), '_', '\_'), '*', '%'), '?', '_') COLLATE "C")
$$;

-- A pattern's specificity (approvals.specificity): an exact kind first,
-- then globs by their count of literal bytes.
CREATE FUNCTION tollgate_pattern_specificity(p_pattern text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_pattern !~ '[*?]' THEN 1048576
        ELSE octet_length(p_pattern) - length(p_pattern) + length(replace(replace(p_pattern, '*', ''), '?', '')) END
$$;

-- The decision approvals.Decide makes for an action: the newest rule of
-- each pattern and condition, in order (priority, specificity, a
-- condition before none, oldest first), the first whose pattern matches
-- and whose condition holds; a condition that cannot be evaluated, or no
-- match, gives the default (approval by one operator within 24 hours).
-- On a signed ledger (one with registered operators) a rule without a
-- signature is not policy.
CREATE FUNCTION tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint,
    OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    -- Typed variables, not a record: PL/pgSQL plans an expression that
    -- reads a record's field again at every row.
    v_id bigint;
    v_pattern text;
    v_mode text;
    v_ttl bigint;
    v_approvers bigint;
    v_condition text;
    v_ast text;
    v_ctx jsonb := tollgate_cel_context(CASE WHEN coalesce(p_context, '') = '' THEN '{}'::jsonb ELSE p_context::jsonb END);
    v_act jsonb := jsonb_build_object('kind', p_kind, 'target', p_target, 'agent', p_agent);
    v_signed boolean := EXISTS (SELECT 1 FROM operators);
    v_holds boolean;
BEGIN
    FOR v_id, v_pattern, v_mode, v_ttl, v_approvers, v_condition, v_ast IN SELECT p.id, p.pattern, p.mode, p.ttl_ms, p.approvers, p.condition, c.ast
        FROM policy_rules p LEFT JOIN policy_conditions c ON c.rule_id = p.id
        WHERE p.id IN (SELECT max(id) FROM policy_rules GROUP BY pattern, condition)
          AND tollgate_pattern_matches(p.pattern, p_kind)
          AND (NOT v_signed OR EXISTS (SELECT 1 FROM signatures s WHERE s.fact_table = 'policy_rules' AND s.fact_row = p.id::text))
        ORDER BY p.priority DESC, tollgate_pattern_specificity(p.pattern) DESC, (p.condition <> '') DESC, p.id
    LOOP
        IF v_condition <> '' THEN
            IF v_ast IS NULL THEN
                RAISE EXCEPTION 'rule % has a condition the database has no translation of: set it again with this tollgate', v_id USING ERRCODE = 'TG002';
            END IF;
            v_holds := tollgate_condition_holds_cel(v_ast::jsonb, v_ctx, v_act, p_at_ms::numeric * 1000000);
            IF v_holds IS NULL THEN
                EXIT;
            END IF;
            CONTINUE WHEN NOT v_holds;
        END IF;
        o_mode := v_mode;
        o_rule := v_id;
        o_ttl_ms := CASE WHEN v_mode = 'approval' AND v_ttl <= 0 THEN 86400000 ELSE v_ttl END;
        o_approvers := greatest(v_approvers, 1);
        o_pattern := v_pattern;
        RETURN;
    END LOOP;
    o_mode := 'approval';
    o_rule := NULL;
    o_ttl_ms := 86400000;
    o_approvers := 1;
    o_pattern := '(no rule matches)';
END $$;
REVOKE ALL ON FUNCTION tollgate_policy_decide(text, text, text, text, bigint) FROM PUBLIC;

-- The most a fact's time may differ from the database's clock, in
-- milliseconds: 60 s unless the database's owner set
-- tollgate.clock_skew_ms for the whole database (ALTER DATABASE ... SET,
-- which no agent or operator role may run; a negative value lifts the
-- bound, for tests with an injected clock). A session's own SET of the
-- same name is not read.
CREATE FUNCTION tollgate_clock_ok(p_at_ms bigint) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
END $$;
REVOKE ALL ON FUNCTION tollgate_clock_ok(bigint) FROM PUBLIC;

-- A copy of a ledger (migrate --from) brings facts that were checked
-- where they were made, with their own times: the schema's owner may
-- mark its transaction as a copy (SET LOCAL tollgate.copying = 'on');
-- for any other role the mark means nothing.
CREATE FUNCTION tollgate_copying() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT coalesce(current_setting('tollgate.copying', true), '') = 'on'
        AND pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'MEMBER')
$$;
REVOKE ALL ON FUNCTION tollgate_copying() FROM PUBLIC;

CREATE FUNCTION tollgate_refuse(p_key text, p_msg text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'key %: %', p_key, p_msg USING ERRCODE = 'TG002';
END $$;

-- The target a rule reads: the stored payload's, or for a redacted
-- payload the one the guard's transaction named (set_config
-- 'tollgate.target') when its SHA-256 is the payload's target digest;
-- NULL when neither is known.
CREATE FUNCTION tollgate_action_target(p_canonical text, p_target_sha256 text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
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

CREATE FUNCTION tollgate_check_policy_eval() RETURNS trigger
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
    d := tollgate_policy_decide(p.kind, tollgate_action_target(p.canonical, p.target_sha256), p.agent, p.context, NEW.at_ms);
    IF NEW.mode IS DISTINCT FROM d.o_mode OR NEW.rule_id IS DISTINCT FROM d.o_rule OR NEW.ttl_ms IS DISTINCT FROM d.o_ttl_ms
        OR NEW.approvers IS DISTINCT FROM d.o_approvers OR NEW.pattern IS DISTINCT FROM d.o_pattern THEN
        PERFORM tollgate_refuse(NEW.action_key, format('the rules decide %s (rule %s, pattern %s, ttl %s ms, %s approvers), not %s (rule %s)',
            d.o_mode, coalesce(d.o_rule::text, 'none'), d.o_pattern, d.o_ttl_ms, d.o_approvers, NEW.mode, coalesce(NEW.rule_id::text, 'none')));
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER policy_evals_follow_rules BEFORE INSERT ON policy_evals FOR EACH ROW EXECUTE FUNCTION tollgate_check_policy_eval();

CREATE FUNCTION tollgate_check_approval_request() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
CREATE TRIGGER approval_requests_follow_rules BEFORE INSERT ON approval_requests FOR EACH ROW EXECUTE FUNCTION tollgate_check_approval_request();

CREATE FUNCTION tollgate_check_permit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    e record;
    v_active text;
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
    SELECT epoch INTO v_active FROM epochs ORDER BY seq DESC LIMIT 1;
    IF v_active IS NOT NULL AND NOT starts_with(NEW.action_key, 'hsr1:' || v_active || ':') THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a permit needs a key of the active epoch %s', v_active));
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER permits_follow_rules BEFORE INSERT ON permits FOR EACH ROW EXECUTE FUNCTION tollgate_check_permit();

CREATE FUNCTION tollgate_check_report() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
CREATE TRIGGER reports_follow_rules BEFORE INSERT ON reports FOR EACH ROW EXECUTE FUNCTION tollgate_check_report();

-- The trigger functions and the evaluator are the owner's; no role calls
-- them directly.
REVOKE ALL ON FUNCTION tollgate_check_policy_eval(), tollgate_check_approval_request(), tollgate_check_permit(), tollgate_check_report(),
    tollgate_refuse(text, text), tollgate_action_target(text, text) FROM PUBLIC;

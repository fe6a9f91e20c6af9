-- Schema 15: the database checks what an agent's role writes, on the
-- tables, so that tollgate_guard (schema 14) and the raw path it leaves
-- other guards to (the insert functions of schema 10) are held to one
-- rule. Until now a payload row's kind column, which the policy trigger
-- (schema 11) decides on, could name another kind than its canonical
-- text (a permit for a denied action), the canonical text need not be
-- canonical (a duplicate field hid the body from show --payload) and an
-- agent's name could carry terminal escapes. A migrated copy (the
-- owner's tollgate.copying mark) brings rows checked where they were
-- made, as the schema-11 triggers assume.

-- A string as Python's json.dumps(ensure_ascii=True) writes it, which is
-- what the canonical text is (ledger/payload.go appendPyString):
-- PostgreSQL's JSON escaping is Python's for quotes, backslashes and
-- the characters below U+0020 (\b \f \n \r \t, the rest \u00XX in lower
-- case), and writes everything else raw; Python escapes DEL and every
-- non-ASCII character as \uXXXX, beyond U+FFFF as a surrogate pair.
CREATE FUNCTION tollgate_py_string(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
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
END $$;

CREATE FUNCTION tollgate_sha256_hex(p text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
    SELECT encode(sha256(convert_to(p, 'UTF8')), 'hex')
$$;

-- A number in a context's canonical form (ledger/actioncontext.go
-- appendContextValue): an integral one below 2^53 without a fraction,
-- any other as Go's strconv.FormatFloat(x, 'g', -1, 64) writes it, from
-- the shortest digits that read back as the same float, which is what
-- PostgreSQL prints (extra_float_digits 1): %e form when the decimal
-- exponent is below -4 or at least 6, a two-digit exponent at least.
CREATE FUNCTION tollgate_go_number(p float8) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp SET extra_float_digits = 1 AS $$
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

-- A context's canonical form (ledger/actioncontext.go ParseContext and
-- Canonical): at most 32 fields named [a-z][a-z0-9_]{0,63}, sorted, each
-- a string of at most 1000 code points, a finite number, a boolean or a
-- list of at most 64 such strings; the empty string for no field; NULL
-- for a text the client refuses.
CREATE FUNCTION tollgate_context_canonical(p text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = public, pg_temp AS $$
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
END $$;

-- The SHA-256 of p with each p_mark a NUL (NULL: none). The mark is
-- private-use (U+E0xx, bytes EE 80-83 80-BF): its hex cannot match
-- across two characters of valid UTF-8.
CREATE FUNCTION tollgate_sha256_nul(p text, p_mark text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN p_mark IS NULL THEN encode(sha256(convert_to(p, 'UTF8')), 'hex')
        ELSE encode(sha256(decode(replace(encode(convert_to(p, 'UTF8'), 'hex'), encode(convert_to(p_mark, 'UTF8'), 'hex'), '00'), 'hex')), 'hex') END
$$;

-- A payload row is what its canonical text says: the text is the
-- canonical encoding of its three fields (SPEC 2: no duplicate, extra or
-- missing field, no spaces, Python's escapes), each field at most 4000
-- code points (ledger/payload.go MaxFieldRunes), its SHA-256 the row's
-- digest, and the kind column and the kind, target and body digests
-- those of its fields; its context is in canonical form, with its
-- digest. A redacted row keeps no text: its kind column must still be
-- the kind its kind digest names, and its context is checked alike.
CREATE FUNCTION tollgate_check_payload_row() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
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
CREATE TRIGGER payloads_are_canonical BEFORE INSERT ON tollgate_private.payloads
    FOR EACH ROW EXECUTE FUNCTION tollgate_check_payload_row();

-- An agent's name as the client takes it (approvals.CheckName, SPEC 4):
-- at most 200 bytes, no control (Cc) or format (Cf) character, no line
-- or paragraph separator. The class is Go's unicode.Cc and unicode.Cf
-- (Unicode 15), which TestPostgresAgentNameRuleIsGos compares.
CREATE FUNCTION tollgate_name_ok(p text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
    SELECT octet_length(p) <= 200 AND p !~ '[\U00000001-\U0000001F\U0000007F-\U0000009F\U000000AD\U00000600-\U00000605\U0000061C\U000006DD\U0000070F\U00000890-\U00000891\U000008E2\U0000180E\U0000200B-\U0000200F\U0000202A-\U0000202E\U00002060-\U00002064\U00002066-\U0000206F\U0000FEFF\U0000FFF9-\U0000FFFB\U000110BD\U000110CD\U00013430-\U0001343F\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0001\U000E0020-\U000E007F\U00002028\U00002029]'
$$;

CREATE FUNCTION tollgate_check_agent_name() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF tollgate_copying() THEN RETURN NEW; END IF;
    IF NOT tollgate_name_ok(NEW.agent) THEN
        PERFORM tollgate_refuse(NEW.action_key, 'an agent name of more than 200 bytes or with a control or format character');
    END IF;
    RETURN NEW;
END $$;

-- Every fact table that names an agent (the projection, action_index,
-- is written from them).
CREATE TRIGGER payloads_agent_name BEFORE INSERT ON tollgate_private.payloads FOR EACH ROW EXECUTE FUNCTION tollgate_check_agent_name();
CREATE TRIGGER conflicts_agent_name BEFORE INSERT ON tollgate_private.conflicts FOR EACH ROW EXECUTE FUNCTION tollgate_check_agent_name();
CREATE TRIGGER approval_requests_agent_name BEFORE INSERT ON approval_requests FOR EACH ROW EXECUTE FUNCTION tollgate_check_agent_name();
CREATE TRIGGER permits_agent_name BEFORE INSERT ON permits FOR EACH ROW EXECUTE FUNCTION tollgate_check_agent_name();
CREATE TRIGGER fenced_agent_name BEFORE INSERT ON fenced FOR EACH ROW EXECUTE FUNCTION tollgate_check_agent_name();

-- Whether a row's xmin is this transaction's (or one of its
-- subtransactions'): a row another transaction has not committed is
-- invisible, so a visible row whose writer is still in progress is this
-- transaction's. The 32-bit xmin is widened with the current epoch.
CREATE FUNCTION tollgate_xmin_mine(p_xmin xid) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_cur bigint := txid_current();
    v_full bigint := ((v_cur >> 32) << 32) + p_xmin::text::bigint;
BEGIN
    IF v_full > v_cur + 2147483648 THEN
        v_full := v_full - 4294967296;
    END IF;
    RETURN txid_status(v_full) = 'in progress';
END $$;

-- Which event commits a row of which table (ledger/facts.go factTables),
-- the tables an agent's role writes, and each table's row number column.
CREATE TABLE tollgate_private.fact_events (
    fact_table TEXT COLLATE "C" NOT NULL,
    type       TEXT COLLATE "C" NOT NULL,
    id_col     TEXT COLLATE "C" NOT NULL,
    key_col    TEXT COLLATE "C" NOT NULL,
    agents     BOOLEAN NOT NULL,
    PRIMARY KEY (fact_table, type)
);
INSERT INTO tollgate_private.fact_events VALUES
    ('payloads', 'recorded', 'action_key', 'action_key', true),
    ('conflicts', 'conflict', 'id', 'action_key', true),
    ('policy_rules', 'policy_set', 'id', '', false),
    ('policy_evals', 'policy_evaluated', 'action_key', 'action_key', true),
    ('approval_requests', 'approval_requested', 'action_key', 'action_key', true),
    ('decisions', 'approved', 'action_key', 'action_key', false),
    ('decisions', 'rejected', 'action_key', 'action_key', false),
    ('permits', 'permit_issued', 'action_key', 'action_key', true),
    ('reports', 'report_accepted', 'id', 'action_key', true),
    ('reports', 'report_late', 'id', 'action_key', true),
    ('reports', 'report_refused', 'id', 'action_key', true),
    ('report_refusals', 'report_refused_unfiled', 'id', 'action_key', true),
    ('reconciliations', 'reconciled', 'action_key', 'action_key', false),
    ('epochs', 'epoch_activated', 'seq', '', false),
    ('fenced', 'fenced', 'id', 'action_key', true),
    ('conflict_reviews', 'conflict_reviewed', 'conflict_id', '', false),
    ('fenced_reviews', 'fenced_reviewed', 'fenced_id', '', false),
    ('ledger_meta', 'ledger_created', 'one', '', false),
    ('operators', 'operator_added', 'id', '', false),
    ('operators', 'operator_removed', 'id', '', false),
    ('votes', 'vote', 'id', 'action_key', false),
    ('signatures', 'signed', 'id', '', false),
    ('archives', 'archive_checkpoint', 'id', '', false),
    ('set_aside', 'set_aside', 'id', 'action_key', false);

-- The columns a row hash of an agent's fact covers (ledger/facts.go
-- factTables cols and optional), in order; an optional column is left
-- out at its default, and named first when tagged.
CREATE TABLE tollgate_private.fact_hash_cols (
    fact_table TEXT COLLATE "C" NOT NULL,
    n          INT NOT NULL,
    col        TEXT COLLATE "C" NOT NULL,
    opt_def    TEXT COLLATE "C",
    tagged     BOOLEAN NOT NULL,
    PRIMARY KEY (fact_table, n)
);
INSERT INTO tollgate_private.fact_hash_cols VALUES
    ('payloads', 1, 'action_key', NULL, false),
    ('payloads', 2, 'payload_sha256', NULL, false),
    ('payloads', 3, 'canonical', NULL, false),
    ('payloads', 4, 'redacted', NULL, false),
    ('payloads', 5, 'kind', NULL, false),
    ('payloads', 6, 'kind_sha256', NULL, false),
    ('payloads', 7, 'target_sha256', NULL, false),
    ('payloads', 8, 'body_sha256', NULL, false),
    ('payloads', 9, 'agent', NULL, false),
    ('payloads', 10, 'recorded_ms', NULL, false),
    ('payloads', 11, 'context_sha256', '', true),
    ('payloads', 12, 'context', '', true),
    ('conflicts', 1, 'id', NULL, false),
    ('conflicts', 2, 'action_key', NULL, false),
    ('conflicts', 3, 'stored_sha256', NULL, false),
    ('conflicts', 4, 'attempted_sha256', NULL, false),
    ('conflicts', 5, 'attempted', NULL, false),
    ('conflicts', 6, 'redacted', NULL, false),
    ('conflicts', 7, 'differs', NULL, false),
    ('conflicts', 8, 'agent', NULL, false),
    ('conflicts', 9, 'at_ms', NULL, false),
    ('policy_evals', 1, 'action_key', NULL, false),
    ('policy_evals', 2, 'mode', NULL, false),
    ('policy_evals', 3, 'ttl_ms', NULL, false),
    ('policy_evals', 4, 'rule_id', NULL, false),
    ('policy_evals', 5, 'pattern', NULL, false),
    ('policy_evals', 6, 'at_ms', NULL, false),
    ('policy_evals', 7, 'approvers', '1', false),
    ('policy_evals', 8, 'explain', '', true),
    ('approval_requests', 1, 'action_key', NULL, false),
    ('approval_requests', 2, 'agent', NULL, false),
    ('approval_requests', 3, 'requested_ms', NULL, false),
    ('approval_requests', 4, 'expires_ms', NULL, false),
    ('permits', 1, 'action_key', NULL, false),
    ('permits', 2, 'permit_id', NULL, false),
    ('permits', 3, 'agent', NULL, false),
    ('permits', 4, 'issued_ms', NULL, false),
    ('permits', 5, 'lease_ms', NULL, false),
    ('reports', 1, 'id', NULL, false),
    ('reports', 2, 'action_key', NULL, false),
    ('reports', 3, 'permit_id', NULL, false),
    ('reports', 4, 'outcome', NULL, false),
    ('reports', 5, 'ref', NULL, false),
    ('reports', 6, 'latency_ms', NULL, false),
    ('reports', 7, 'kind', NULL, false),
    ('reports', 8, 'at_ms', NULL, false),
    ('reports', 9, 'result', '', true),
    ('report_refusals', 1, 'id', NULL, false),
    ('report_refusals', 2, 'action_key', NULL, false),
    ('report_refusals', 3, 'permit_id', NULL, false),
    ('report_refusals', 4, 'outcome', NULL, false),
    ('report_refusals', 5, 'ref', NULL, false),
    ('report_refusals', 6, 'latency_ms', NULL, false),
    ('report_refusals', 7, 'rule', NULL, false),
    ('report_refusals', 8, 'at_ms', NULL, false),
    ('fenced', 1, 'id', NULL, false),
    ('fenced', 2, 'action_key', NULL, false),
    ('fenced', 3, 'key_epoch', NULL, false),
    ('fenced', 4, 'active_epoch', NULL, false),
    ('fenced', 5, 'payload_sha256', NULL, false),
    ('fenced', 6, 'agent', NULL, false),
    ('fenced', 7, 'reason', NULL, false),
    ('fenced', 8, 'at_ms', NULL, false);

-- A row's hash as rowHash computes it from the values the driver reads
-- (a number an int64, 'i'; text 's'; NULL 'n'), with tollgate_row_hash
-- (schema 14). NULL for a table not listed above.
CREATE FUNCTION tollgate_fact_hash(p_table text, p_row jsonb) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
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

-- Whether the session is an agent's role only (not an operator's, not
-- the schema's owner): what it appends is a key transaction's events.
CREATE FUNCTION tollgate_agent_only() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT NOT pg_has_role(session_user, 'tollgate_operator', 'USAGE')
        AND NOT pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'USAGE')
$$;

-- An event is appended only by the transaction that wrote what it
-- commits (tollgate_append_event and _events take any arguments, and
-- both roles may call them): an event that names a fact row names a row
-- of the table its type commits, of its key, that this transaction
-- wrote and no other event names, with its hash (for the tables an
-- agent's role writes; the operators' hold a signature's bytes). An agent's role appends only its key
-- transactions' events: those that commit the agent's facts, and a
-- disagreement its own report in this transaction flags.
CREATE FUNCTION tollgate_check_event() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    f record;
    v_xmin xid;
    v_key text;
    v_row jsonb;
    v_bad text;
BEGIN
    IF tollgate_copying() THEN RETURN NEW; END IF;
    IF NEW.fact_table = '' THEN
        IF NEW.fact_row <> '' OR NEW.fact_sha256 <> '' THEN
            v_bad := 'names a fact row but no table';
        ELSIF NEW.type IN (SELECT type FROM tollgate_private.fact_events) THEN
            v_bad := 'commits no fact row though its type commits one';
        ELSIF tollgate_agent_only() AND NOT (NEW.type = 'disagreement_flagged'
                AND EXISTS (SELECT 1 FROM reports r WHERE r.action_key = NEW.action_key AND tollgate_xmin_mine(r.xmin))) THEN
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
            ELSIF EXISTS (SELECT 1 FROM events e WHERE e.fact_table = NEW.fact_table AND e.fact_row = NEW.fact_row) THEN
                v_bad := 'names a fact row another event commits';
            END IF;
        END IF;
    END IF;
    IF v_bad IS NOT NULL THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a %s event that %s', NEW.type, v_bad));
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER events_commit_own_facts BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION tollgate_check_event();

-- A fact row an agent's role may write is committed by an event of its
-- transaction: checked at COMMIT, once the events are appended.
CREATE FUNCTION tollgate_check_fact_committed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_id text;
BEGIN
    IF tollgate_copying() THEN RETURN NULL; END IF;
    SELECT to_jsonb(NEW) ->> e.id_col INTO v_id FROM tollgate_private.fact_events e WHERE e.fact_table = TG_TABLE_NAME LIMIT 1;
    IF NOT EXISTS (SELECT 1 FROM events e WHERE e.fact_table = TG_TABLE_NAME AND e.fact_row = v_id) THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a %s row that no event of its transaction commits', TG_TABLE_NAME));
    END IF;
    RETURN NULL;
END $$;
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT DISTINCT fact_table FROM tollgate_private.fact_events WHERE agents ORDER BY 1 LOOP
        EXECUTE format('CREATE CONSTRAINT TRIGGER %I AFTER INSERT ON %s DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tollgate_check_fact_committed()',
            t || '_committed_by_an_event',
            coalesce(to_regclass('tollgate_private.' || quote_ident(t)), ('public.' || quote_ident(t))::regclass));
    END LOOP;
END $$;

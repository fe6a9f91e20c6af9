-- Signed statements bound to their place (schema 8); see the SQLite
-- migration of the same number. A signature counts once.
CREATE UNIQUE INDEX signatures_once ON signatures(signature);

-- Policy over context (SPEC 10); see the SQLite migration of the same
-- number.
ALTER TABLE policy_rules ADD COLUMN condition TEXT COLLATE "C" NOT NULL DEFAULT '' CHECK (length(condition) <= 2000);
ALTER TABLE policy_rules ADD COLUMN priority BIGINT NOT NULL DEFAULT 0 CHECK (priority BETWEEN -1000 AND 1000);
ALTER TABLE policy_evals ADD COLUMN explain TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE payloads ADD COLUMN context_sha256 TEXT COLLATE "C" NOT NULL DEFAULT ''
    CHECK (context_sha256 = '' OR context_sha256 ~ '^[0-9a-f]{64}$');
ALTER TABLE payloads ADD COLUMN context TEXT COLLATE "C" NOT NULL DEFAULT '' CHECK (length(context) <= 8192);
ALTER TABLE action_index ADD COLUMN context_sha256 TEXT COLLATE "C" NOT NULL DEFAULT '';

-- The chain and the projection are written only through functions. Until
-- now both roles could UPDATE chain_head (an agent setting seq to the
-- largest bigint stopped every later write) and action_index (an agent
-- marking another agent's key succeeded made guard answer "settled"), and
-- INSERT events out of turn. These functions run as the schema's owner
-- with search_path pinned; the roles get EXECUTE on them instead of those
-- grants. The state machine (package ledger) calls them on PostgreSQL.

-- The hash of an event, byte for byte ledger/events.go's eventHashV2:
-- each field written as its length in bytes, ':', and its UTF-8 bytes.
CREATE FUNCTION tollgate_event_hash(prev text, seq bigint, key text, typ text, actor text, detail text, at_ms bigint,
    fact_table text, fact_row text, fact_sha256 text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog AS $$
    SELECT encode(sha256(string_agg(convert_to(octet_length(convert_to(f, 'UTF8'))::text || ':', 'UTF8') || convert_to(f, 'UTF8'), ''::bytea ORDER BY n)), 'hex')
    FROM unnest(ARRAY['v2', prev, seq::text, key, typ, actor, detail, at_ms::text, fact_table, fact_row, fact_sha256]) WITH ORDINALITY AS x(f, n)
$$;

-- The chain head, locked until the caller's transaction ends: every
-- writing transaction takes it first, so writers on any host are ordered.
CREATE FUNCTION tollgate_lock_head(OUT o_seq bigint, OUT o_hash text)
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT seq, hash FROM chain_head WHERE one = 1 FOR UPDATE
$$;

-- Appends one event after the head and moves the head to it: the number,
-- the previous hash and the hash are the database's, never the caller's.
CREATE FUNCTION tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint,
    p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_prev text;
BEGIN
    SELECT h.seq + 1, h.hash INTO o_seq, v_prev FROM chain_head h WHERE h.one = 1 FOR UPDATE;
    o_hash := tollgate_event_hash(v_prev, o_seq, p_key, p_type, p_actor, p_detail, p_at, p_fact_table, p_fact_row, p_fact_sha256);
    INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv)
        VALUES (o_seq, p_key, p_type, p_actor, p_detail, p_at, v_prev, o_hash, p_fact_table, p_fact_row, p_fact_sha256, 2);
    UPDATE chain_head SET seq = o_seq, hash = o_hash WHERE one = 1;
END $$;

-- A new intent's projection row, whoever recorded it.
ALTER FUNCTION tollgate_index_intent() SECURITY DEFINER SET search_path = public, pg_temp;

-- tollgate_refresh_index(key, target) is created by the state machine's
-- step of this migration (it derives the row from the facts with the same
-- SQL verify uses, which lives in package ledger).

REVOKE INSERT ON events FROM tollgate_agent, tollgate_operator;
REVOKE INSERT, UPDATE ON action_index FROM tollgate_agent, tollgate_operator;
REVOKE UPDATE ON chain_head FROM tollgate_agent, tollgate_operator;
REVOKE EXECUTE ON FUNCTION tollgate_lock_head(), tollgate_append_event(text, text, text, text, bigint, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_lock_head(), tollgate_append_event(text, text, text, text, bigint, text, text, text)
    TO tollgate_agent, tollgate_operator;

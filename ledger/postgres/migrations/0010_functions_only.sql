-- Agents and operators write only through functions (SPEC 8, issue 25).
-- Until now both roles INSERTed fact rows directly, and the agent's role
-- could SELECT every other agent's payload bodies. From this version the
-- roles hold EXECUTE on the functions below and SELECT on what they read,
-- and no INSERT, UPDATE, DELETE or TRUNCATE on any table: every fact is
-- inserted by a SECURITY DEFINER function (search_path pinned) that
-- decides which role may write which table by which function it was
-- granted. The database, not the client, refuses an agent a decision.

-- Payload bodies. payloads.canonical and conflicts.attempted hold what an
-- agent sent; one agent's role must not read another's. The two tables
-- move into a schema no role but the owner may use, each row now names
-- the database role that wrote it (db_role, not part of the row hash, as
-- on decisions), and public.payloads and public.conflicts become views
-- that show a body only to the role that wrote it and to operators.
-- Digests, kinds, agents and contexts stay visible to every role: a
-- conflict is found and named from them. Rows written before this
-- version record no role (''), so their bodies are shown to operators
-- only.
CREATE SCHEMA tollgate_private;
REVOKE ALL ON SCHEMA tollgate_private FROM PUBLIC;

ALTER TABLE payloads ADD COLUMN db_role TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE payloads ALTER COLUMN db_role SET DEFAULT session_user;
ALTER TABLE conflicts ADD COLUMN db_role TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE conflicts ALTER COLUMN db_role SET DEFAULT session_user;
ALTER TABLE payloads SET SCHEMA tollgate_private;
ALTER TABLE conflicts SET SCHEMA tollgate_private;
REVOKE ALL ON tollgate_private.payloads, tollgate_private.conflicts FROM tollgate_agent, tollgate_operator;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA tollgate_private FROM tollgate_agent, tollgate_operator;

-- Whether this session sees every body: an operator's role, the
-- schema's owner (who migrates and verifies) or a superuser. The role is
-- the session's login role, the one the insert functions record.
CREATE FUNCTION tollgate_sees_bodies() RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT pg_has_role(session_user, 'tollgate_operator', 'USAGE')
        OR pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'USAGE')
$$;

-- The views keep each table's columns in its order, so that every
-- statement of the state machine reads them as it read the tables. A
-- body another role wrote reads as NULL; the scalar subquery asks the
-- role question once per statement, not once per row.
CREATE VIEW payloads AS
    SELECT p.action_key, p.payload_sha256,
        CASE WHEN p.db_role = session_user OR (SELECT tollgate_sees_bodies()) THEN p.canonical END AS canonical,
        p.redacted, p.kind, p.kind_sha256, p.target_sha256, p.body_sha256, p.agent, p.recorded_ms,
        p.context_sha256, p.context, p.db_role
    FROM tollgate_private.payloads p;
CREATE VIEW conflicts AS
    SELECT c.id, c.action_key, c.stored_sha256, c.attempted_sha256,
        CASE WHEN c.db_role = session_user OR (SELECT tollgate_sees_bodies()) THEN c.attempted END AS attempted,
        c.redacted, c.differs, c.agent, c.at_ms, c.db_role
    FROM tollgate_private.conflicts c;

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
CREATE FUNCTION tollgate_make_insert_fact(p_table text, p_roles text) RETURNS void
LANGUAGE plpgsql SET search_path = public, pg_temp AS $make$
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
END $make$;
REVOKE ALL ON FUNCTION tollgate_make_insert_fact(text, text) FROM PUBLIC;

-- The agent's facts: what guard, record and report write.
SELECT tollgate_make_insert_fact(t, 'tollgate_agent, tollgate_operator')
    FROM unnest(ARRAY['payloads', 'conflicts', 'policy_evals', 'approval_requests', 'permits', 'reports', 'report_refusals', 'fenced']) t;
-- The operator's: decisions and votes, reconciliations, rules, epochs,
-- reviews, the operator registry and signatures.
SELECT tollgate_make_insert_fact(t, 'tollgate_operator')
    FROM unnest(ARRAY['decisions', 'votes', 'reconciliations', 'policy_rules', 'epochs', 'conflict_reviews', 'fenced_reviews',
        'operators', 'signatures']) t;

-- Retention's checkpoint (schema 9) is the owner's (archive lifts the
-- append-only triggers, which only the owner may); its function exists
-- so that the state machine inserts every fact one way. A set-aside row
-- is never written here (no role can forge a decision to set aside).
SELECT tollgate_make_insert_fact(t, 'tollgate_operator') FROM unnest(ARRAY['archives', 'set_aside']) t;

-- An intent in the seed fixture's table (SPEC 3), once per key.
CREATE FUNCTION tollgate_record_intent(p_key text, p_sha256 text) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
    INSERT INTO intents VALUES (p_key, p_sha256, 'recorded') ON CONFLICT (action_key) DO NOTHING
$$;

REVOKE EXECUTE ON FUNCTION tollgate_record_intent(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_record_intent(text, text) TO tollgate_agent, tollgate_operator;

-- Read, and call: nothing else.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA public FROM tollgate_agent, tollgate_operator;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM tollgate_agent, tollgate_operator;
GRANT SELECT ON payloads, conflicts TO tollgate_agent, tollgate_operator;

-- tollgate's PostgreSQL ledger: the views that hide one agent's payload
-- bodies from another's role (the tables are in tollgate_private), and
-- the function they ask.
-- Objects (pgschema-fold.py writes what follows, up to the rows):

-- Whether this session sees every body: an operator's role, the
-- schema's owner (who migrates and verifies) or a superuser. The role is
-- the session's login role, the one the insert functions record.
CREATE FUNCTION public.tollgate_sees_bodies() RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT pg_has_role(session_user, 'tollgate_operator', 'USAGE')
        OR pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'USAGE')
$$;

-- The views keep each table's columns in its order, so that every
-- statement of the state machine reads them as it read the tables. A
-- body another role wrote reads as NULL; the scalar subquery asks the
-- role question once per statement, not once per row.
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

-- The views keep each table's columns in its order, so that every
-- statement of the state machine reads them as it read the tables. A
-- body another role wrote reads as NULL; the scalar subquery asks the
-- role question once per statement, not once per row.
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

-- Schema 42: other roles' targets are hidden like their bodies (issue 41).
--
-- The projection (action_index) kept every key's target in clear, and
-- every role reads the projection: an agent's role read every other
-- agent's targets (an IBAN in the trial), though bodies are hidden from
-- it (schema 10) and the docs' list of what it sees did not name them.
-- Now the table lives in tollgate_private, where no role but the owner
-- reaches it, behind a view of its name in public with the same columns,
-- which shows a target only to the login role that wrote the key's
-- payload, to members of tollgate_operator and to the owner (the rule
-- payloads.canonical follows); any other role reads an empty target, as
-- a redacted key's reads. Every other column stays visible, so status,
-- list and the guard's one-round-trip answer work for any key.
--
-- The projection's two writers, tollgate_index_intent and
-- tollgate_refresh_index (whose text the state machine makes, at
-- migrations 8 and 13 and in a copy), name the table without a schema:
-- they now look in tollgate_private first, so each writes the table, on
-- this schema and on every older one a test or a copy creates. The
-- owner's writes that bypass them (a copy, an archive run) name the
-- table itself (ledger/postgres Table).
CREATE VIEW public.action_index AS
 SELECT x.id,
    x.action_key,
    x.logical_key,
    x.epoch,
    x.kind,
    x.agent,
    x.stage,
    x.deadline_ms,
    x.updated_ms,
    x.payload_sha256,
    x.retained,
    x.redacted,
        CASE
            WHEN ((x.target = ''::text) OR ( SELECT public.tollgate_sees_bodies() AS tollgate_sees_bodies) OR (EXISTS ( SELECT 1
               FROM tollgate_private.payloads p
              WHERE ((p.action_key = x.action_key) AND (p.db_role = SESSION_USER))))) THEN x.target
            ELSE ''::text
        END AS target,
    x.context_sha256,
    x.answer
   FROM tollgate_private.action_index x;

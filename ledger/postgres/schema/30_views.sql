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

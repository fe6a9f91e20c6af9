-- Schema 28: an agent's name is its login role's unless an operator
-- allows it another (issue 25, TestPostgresGuardHoleAgentNameInPolicy).
-- The name a rule reads as action.agent, and the one status, export and
-- the console show as the requester, was the string the client sent
-- (guard --agent): an agent's role bot1 guarded as "backup-bot" and was
-- issued the auto permit of a rule `action.agent == "backup-bot"`. SPEC 8
-- makes the login role an agent's identity; from here the database binds
-- the name to it, whatever the client does.
--
-- * A payload (the first write of a key, which the rules are decided
--   on) or a conflict whose agent is not the writing session's login
--   role (session_user, the one payloads.db_role records) is refused
--   (TG002, exit 77), and the refusal rolls back the whole call: nothing
--   of the key is stored. A trigger on the private tables covers every
--   path: the one-call functions (tollgate_guard, tollgate_record and
--   their private parts) and the client's key transaction through the
--   insert functions. It has no guard_writing exemption (schema 21): the
--   one-call functions do not check the name themselves. Its WHEN clause
--   skips the function call for the honest case, a name that is the
--   role's, so a guard pays nothing more for it.
-- * Exempt: the schema owner's members (they migrate and copy, and own
--   every table anyway) and a copy (migrate --from, tollgate_copying()),
--   whose rows were checked where they were made.
-- * Operators are NOT exempt. An operator's role could approve its own
--   request anyway, so exempting it would give it no power; but the name
--   is evidence too, and an exemption would let a request an operator's
--   role made read as any agent's with nothing recording who chose the
--   name. An operator who runs an agent under another name allows it
--   (tollgate agents allow ROLE NAME), which records who allowed it.
-- * The allowed names live in tollgate_private.agent_names, written only
--   through tollgate_agent_allow and tollgate_agent_revoke (SECURITY
--   DEFINER, search_path pinned, EXECUTE for tollgate_operator only) and
--   read through tollgate_agent_names. It is authorization configuration
--   like a GRANT, not a ledger fact: not chained, not signed, and revoke
--   deletes the row. A name allowed before a key's payload was written
--   stays on that key's facts after revoke, as a GRANT's effects do.
-- * Every (db_role, agent) pair already stored in payloads or conflicts,
--   for a role that still exists and is not the owner's, is allowed here
--   (added_by 'schema 28'), so that deployments whose agents named
--   themselves otherwise keep working after `tollgate migrate`; an
--   operator revokes what it did not mean.

CREATE TABLE tollgate_private.agent_names (
    role     TEXT COLLATE "C" NOT NULL CHECK (role <> ''),
    agent    TEXT COLLATE "C" NOT NULL CHECK (agent <> ''),
    added_by TEXT COLLATE "C" NOT NULL DEFAULT session_user,
    added_ms BIGINT NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
    PRIMARY KEY (role, agent)
);
REVOKE ALL ON tollgate_private.agent_names FROM PUBLIC, tollgate_agent, tollgate_operator;

-- Whether this session's login role may write facts naming p_agent: its
-- own name, a name an operator allowed it, or any name for the schema
-- owner's members.
CREATE FUNCTION tollgate_private.agent_name_allowed(p_agent text) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    RETURN p_agent = session_user
        OR EXISTS (SELECT 1 FROM tollgate_private.agent_names WHERE role = session_user AND agent = p_agent)
        OR pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'MEMBER');
END $$;
REVOKE ALL ON FUNCTION tollgate_private.agent_name_allowed(text) FROM PUBLIC;

CREATE FUNCTION tollgate_private.check_agent_is_role() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF tollgate_copying() OR tollgate_private.agent_name_allowed(NEW.agent) THEN
        RETURN NEW;
    END IF;
    PERFORM tollgate_refuse(NEW.action_key, format('the role %s may not act as agent %s (SPEC 8: an agent''s name is its login role''s unless an operator allows it: tollgate agents allow %s %s)',
        session_user, NEW.agent, session_user, NEW.agent));
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION tollgate_private.check_agent_is_role() FROM PUBLIC;

CREATE TRIGGER payloads_agent_is_role BEFORE INSERT ON tollgate_private.payloads
    FOR EACH ROW WHEN (NEW.agent IS DISTINCT FROM session_user) EXECUTE FUNCTION tollgate_private.check_agent_is_role();
CREATE TRIGGER conflicts_agent_is_role BEFORE INSERT ON tollgate_private.conflicts
    FOR EACH ROW WHEN (NEW.agent IS DISTINCT FROM session_user) EXECUTE FUNCTION tollgate_private.check_agent_is_role();

-- The operator's side. A role that does not exist is refused by name
-- (22023), and so is an agent name the ledger would refuse anyway
-- (tollgate_name_ok, schema 15): allowing it would allow nothing.
CREATE FUNCTION tollgate_agent_allow(p_role text, p_agent text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
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

CREATE FUNCTION tollgate_agent_revoke(p_role text, p_agent text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_n bigint;
BEGIN
    DELETE FROM tollgate_private.agent_names WHERE role = p_role AND agent = p_agent;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n > 0;
END $$;

CREATE FUNCTION tollgate_agent_names() RETURNS TABLE (role text, agent text, added_by text, added_ms bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT a.role, a.agent, a.added_by, a.added_ms FROM tollgate_private.agent_names a ORDER BY a.role, a.agent
$$;

REVOKE ALL ON FUNCTION tollgate_agent_allow(text, text), tollgate_agent_revoke(text, text), tollgate_agent_names() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_agent_allow(text, text), tollgate_agent_revoke(text, text), tollgate_agent_names() TO tollgate_operator;

INSERT INTO tollgate_private.agent_names (role, agent, added_by, added_ms)
    SELECT DISTINCT f.db_role, f.agent, 'schema 28', (extract(epoch FROM clock_timestamp()) * 1000)::bigint
    FROM (SELECT db_role, agent FROM tollgate_private.payloads UNION SELECT db_role, agent FROM tollgate_private.conflicts) f
    JOIN pg_roles r ON r.rolname = f.db_role
    WHERE f.db_role <> '' AND f.agent <> '' AND f.agent <> f.db_role
      AND NOT pg_has_role(r.oid, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'MEMBER')
    ON CONFLICT DO NOTHING;

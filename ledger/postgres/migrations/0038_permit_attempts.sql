-- Schema 38: a permit remembers the attempt that was issued it; the
-- SQLite migration 20 says why, and why only a digest is kept.
--
-- An agent's fact: written by the guard's key transaction through its
-- insert function (both roles), committed by an event of that
-- transaction, its hash checked by the event's trigger. The database
-- also holds that the row names the permit its own transaction wrote for
-- that key, with that permit's agent (so no role attaches an attempt to
-- another's permit), and that the agent is one the login role may act
-- as. The one-call guard (tollgate_guard) does not write it: a guard
-- that carries an attempt id takes the client's key transaction, which
-- does.
CREATE TABLE permit_attempts (
    action_key     TEXT COLLATE "C" PRIMARY KEY,
    permit_id      TEXT COLLATE "C" NOT NULL,
    agent          TEXT COLLATE "C" NOT NULL,
    attempt_sha256 TEXT COLLATE "C" NOT NULL CHECK (attempt_sha256 ~ '^[0-9a-f]{64}$'),
    at_ms          BIGINT NOT NULL
);
CREATE TRIGGER permit_attempts_append_only BEFORE UPDATE OR DELETE ON permit_attempts FOR EACH ROW EXECUTE FUNCTION tollgate_append_only();
CREATE TRIGGER permit_attempts_no_truncate BEFORE UPDATE OR DELETE OR TRUNCATE ON permit_attempts FOR EACH STATEMENT EXECUTE FUNCTION tollgate_append_only();

INSERT INTO tollgate_private.fact_events VALUES ('permit_attempts', 'attempt_recorded', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES
    ('permit_attempts', 1, 'action_key', NULL, false),
    ('permit_attempts', 2, 'permit_id', NULL, false),
    ('permit_attempts', 3, 'agent', NULL, false),
    ('permit_attempts', 4, 'attempt_sha256', NULL, false),
    ('permit_attempts', 5, 'at_ms', NULL, false);

CREATE CONSTRAINT TRIGGER permit_attempts_committed_by_an_event AFTER INSERT ON permit_attempts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tollgate_check_fact_committed();
CREATE TRIGGER permit_attempts_agent_is_role BEFORE INSERT ON permit_attempts
    FOR EACH ROW WHEN (NEW.agent IS DISTINCT FROM session_user) EXECUTE FUNCTION tollgate_private.check_agent_is_role();

CREATE FUNCTION tollgate_private.check_attempt_permit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF tollgate_copying() OR EXISTS (SELECT 1 FROM permits p WHERE p.action_key = NEW.action_key AND p.permit_id = NEW.permit_id
            AND p.agent = NEW.agent AND tollgate_xmin_mine(p.xmin)) THEN
        RETURN NEW;
    END IF;
    PERFORM tollgate_refuse(NEW.action_key, 'an attempt names a permit its own transaction did not issue to that agent');
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION tollgate_private.check_attempt_permit() FROM PUBLIC;
CREATE TRIGGER permit_attempts_own_permit BEFORE INSERT ON permit_attempts
    FOR EACH ROW EXECUTE FUNCTION tollgate_private.check_attempt_permit();

GRANT SELECT ON permit_attempts TO tollgate_agent, tollgate_operator;
SELECT tollgate_make_insert_fact('permit_attempts', 'tollgate_agent, tollgate_operator');

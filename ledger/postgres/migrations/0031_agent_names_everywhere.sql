-- Schema 31: the agent's name an approval request or a permit records is
-- bound to the login role as a payload's is (schema 28). The requester an
-- operator is shown for a recorded key asked later, and the agent a
-- permit names, were written from the name the guard sent: an agent's
-- role that recorded a key under its own name and then guarded it as
-- backup-bot made a request the console showed as backup-bot's. The same
-- check, the same exemptions (the owner's members, a copy), the same
-- refusal (TG002, exit 77, nothing stored), and nothing paid when the
-- name is the role's own.
CREATE TRIGGER approval_requests_agent_is_role BEFORE INSERT ON approval_requests
    FOR EACH ROW WHEN (NEW.agent IS DISTINCT FROM session_user) EXECUTE FUNCTION tollgate_private.check_agent_is_role();
CREATE TRIGGER permits_agent_is_role BEFORE INSERT ON permits
    FOR EACH ROW WHEN (NEW.agent IS DISTINCT FROM session_user) EXECUTE FUNCTION tollgate_private.check_agent_is_role();

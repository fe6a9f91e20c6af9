-- Schema 40: no role but the schema's owner records an intent without
-- its payload (issue 41).
--
-- tollgate_record_intent, which the client's key transaction calls
-- before it inserts the key's payload, is granted to both roles, and up
-- to here nothing held that the payload followed: an agent's role that
-- ran SELECT tollgate_record_intent('job:b2next', <the digest of bot2's
-- future payload>) committed an intent and its projection row with no
-- payload, no event and no role. bot2's honest guard of that payload then
-- answered 77 for ever ("no stored payload to evaluate the policy for"),
-- status showed agent "(none)", and verify counted the row as recorded
-- outside tollgate, the seed fixture's case.
--
-- Now an intent records the login role that wrote it (db_role, as
-- payloads and conflicts do; NULL on rows written before this version,
-- whose writer no one knows), and a deferred check refuses, at COMMIT,
-- an intent written by any role but the owner (and not by a copy) whose
-- key has no payload row: the payload is a fact committed by its event,
-- which names the role's agent (schemas 15, 28, 32), so every row an
-- agent's role writes for a key is committed by an event naming it. A
-- payload-less intent stays possible for the owner alone, tollgate's
-- "outside tollgate" (a copy of a seed fixture's ledger); verify names
-- one written by any other role (TestPostgresIntentSquatRefused).
ALTER TABLE intents ADD COLUMN db_role TEXT COLLATE "C";
ALTER TABLE intents ALTER COLUMN db_role SET DEFAULT session_user;

CREATE FUNCTION tollgate_private.check_intent_payload() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF tollgate_copying() OR pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'tollgate_private'), 'USAGE') THEN
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM tollgate_private.payloads p WHERE p.action_key = NEW.action_key) THEN
        PERFORM tollgate_refuse(NEW.action_key, 'an intent with no payload: a role records a key only with its payload, committed by an event naming its agent (schema 40)');
    END IF;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION tollgate_private.check_intent_payload() FROM PUBLIC;
CREATE CONSTRAINT TRIGGER intents_carry_their_payload AFTER INSERT ON intents
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tollgate_private.check_intent_payload();

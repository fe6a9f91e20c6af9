-- Schema 17: an approved request's permit goes to the role that made the
-- request. Until now tollgate_check_permit checked that a permit under an
-- approval rule had its committed approval, not who asked for it: another
-- agent's role that knew or guessed the body (every role sees the
-- payload's digest, so a guess is checked offline) could guard the key
-- with that payload after the operator approved it and be issued the
-- permit, and the agent whose request it was was told to wait for a lease
-- it did not hold (TestPostgresGuardHoleApprovedPermitTaken). An operator
-- approves a request, and a request is the intent of the role that
-- recorded its payload (payloads.db_role, written from session_user and
-- never by the client), so only that role, or an operator (who sees every
-- body and acts for the ledger), takes its permit. A payload recorded
-- before schema 10 has no role and keeps the old rule. An auto rule's
-- permit is issued in the transaction that records the payload, so it is
-- the recording role's already.

CREATE OR REPLACE FUNCTION tollgate_check_permit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    e record;
    v_active text;
    v_requester text;
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
    IF e.mode = 'approval' THEN
        SELECT p.db_role INTO v_requester FROM tollgate_private.payloads p WHERE p.action_key = NEW.action_key;
        IF v_requester <> '' AND v_requester <> session_user AND NOT tollgate_sees_bodies() THEN
            PERFORM tollgate_refuse(NEW.action_key, format('the approval was for the request of the role %s; only it or an operator takes its permit', v_requester));
        END IF;
    END IF;
    SELECT epoch INTO v_active FROM epochs ORDER BY seq DESC LIMIT 1;
    IF v_active IS NOT NULL AND NOT starts_with(NEW.action_key, 'hsr1:' || v_active || ':') THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a permit needs a key of the active epoch %s', v_active));
    END IF;
    RETURN NEW;
END $$;

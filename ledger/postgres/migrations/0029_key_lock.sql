-- Schema 29: an agent's role locks only its own keys and new ones, and a
-- wait for a key's lock is bounded and names its holder (issue 25;
-- TestPostgresAgentCannotHoldAnotherRolesKey, TestPostgresKeyHolderIsNamed).
--
-- tollgate_lock_key is granted to tollgate_agent: the client's path of a
-- key transaction (a store with an injected clock, an anchor or a
-- witness, and every key the one-call functions leave to it) takes its
-- locks through it. It took, for any logical key its caller named, the
-- key's exclusive transaction lock (1953459309, hashtext(key)) that
-- every guard, report and decision of the key takes, so an agent's role
-- that called it on another agent's approved key in a transaction it
-- left open stopped that agent's guard (each attempt timed out, exit 75)
-- and every operator's decision of the key for as long as its session
-- lived.
--
-- Now, for a caller who is neither an operator nor a member of the
-- schema's owner (tollgate_sees_bodies), a key whose payload another
-- database role recorded (payloads.db_role) is not locked: the function
-- takes the ledger-wide gate as before and answers NULL, holding nothing
-- of the key. What another role's transaction may still do there is log
-- a conflict: the stored payload never changes, so an attempt that
-- differs from it differs whoever holds the key, and the conflict is an
-- appended row and event, which moves no state. The client (ledger/tx.go
-- Tx.othersKey) writes nothing else in such a transaction and says why
-- (exit 77); the database refuses the rest anyway (a permit under an
-- approval rule goes to its requester, schema 17; a report to its
-- permit's holder, schema 11). A new key and the caller's own stay
-- lockable. A key that became another role's while the call waited for
-- its lock is given up with a serialization failure (40001, retried by
-- the client), since a transaction's advisory lock cannot be let go
-- before it ends.
--
-- Every wait for a key's lock (here, in tollgate_private.key_new, under
-- tollgate_guard and tollgate_record, and in tollgate_report) is bounded
-- by half a second, or by the caller's own shorter bound, as schema 25
-- bounds the chain head's: a key's lock is held by a transaction of the
-- key that commits within milliseconds, so a longer wait is a holder that
-- does not let go. It gives up with 55P03 (exit 75: unavailable, retry)
-- and names the holding sessions' roles and pids, which an operator ends
-- with pg_terminate_backend. The lock is first tried without waiting, in
-- the caller's own text, so the common call pays for no function call
-- and no subtransaction.
--
-- The key's lock stays an advisory lock: any role that may run
-- pg_advisory_xact_lock (PUBLIC, until a superuser revokes it) can still
-- take it by its numbers, which doctor's pg.advisory-locks reports with
-- the REVOKE that closes it; the bound above names such a holder too.

CREATE FUNCTION tollgate_private.lock_key(p_logical text) RETURNS void
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
    v_prev text;
    v_holders text;
BEGIN
    IF pg_try_advisory_xact_lock(1953459309, hashtext(p_logical)) THEN
        RETURN;
    END IF;
    v_prev := current_setting('lock_timeout');
    BEGIN
        -- The caller's own bound when it is shorter (its attempt's time).
        IF v_prev IN ('0', '') OR v_prev::interval > interval '500 ms' THEN
            PERFORM set_config('lock_timeout', '500ms', true);
        END IF;
        PERFORM pg_advisory_xact_lock(1953459309, hashtext(p_logical));
        PERFORM set_config('lock_timeout', v_prev, true);
    EXCEPTION WHEN lock_not_available THEN
        -- A lock of two int4 keys shows its first as classid, its second
        -- (an oid, so unsigned) as objid, with objsubid 2.
        SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.classid = 1953459309::oid
                AND l.objid = (hashtext(p_logical)::bigint & 4294967295)::oid AND l.objsubid = 2
                AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                AND l.granted AND l.pid <> pg_backend_pid();
        RAISE EXCEPTION 'the key % is held by %; its guards, reports and decisions wait for it', p_logical, coalesce(v_holders, 'another session')
            USING ERRCODE = 'lock_not_available';
    END;
END $$;
REVOKE ALL ON FUNCTION tollgate_private.lock_key(text) FROM PUBLIC;

-- tollgate_private.others_key names the role that recorded a payload of
-- the logical key when that is neither the caller's session role nor
-- unknown (a payload recorded before schema 10), and the caller does not
-- act for the ledger; NULL otherwise. PL/pgSQL keeps its plan for the
-- session (a SQL function with a FROM is planned again on every call:
-- 140 us, against 4 us for the lock itself), and it has no search_path
-- of its own (a SET costs each call too): tollgate_lock_key, its only
-- caller, pins it. tollgate_sees_bodies (40 us) is asked only of a
-- caller who found another role's payload.
CREATE FUNCTION tollgate_private.others_key(p_logical text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_role text;
BEGIN
    SELECT p.db_role INTO v_role FROM public.action_index x JOIN tollgate_private.payloads p ON p.action_key = x.action_key
        WHERE x.logical_key = p_logical AND p.db_role <> '' AND p.db_role <> session_user LIMIT 1;
    IF v_role IS NULL OR public.tollgate_sees_bodies() THEN
        RETURN NULL;
    END IF;
    RETURN v_role;
END $$;
REVOKE ALL ON FUNCTION tollgate_private.others_key(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION tollgate_lock_key(p_logical text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    LOCK TABLE tollgate_private.ledger_gate IN ROW SHARE MODE;
    IF tollgate_private.others_key(p_logical) IS NOT NULL THEN
        -- Another role's key: the gate, not the key's lock.
        RETURN NULL;
    END IF;
    -- The lock at once when it is free, as almost always; the bounded
    -- wait, which pays for a subtransaction, only when it is not.
    IF NOT pg_try_advisory_xact_lock(1953459309, hashtext(p_logical)) THEN
        PERFORM tollgate_private.lock_key(p_logical);
    END IF;
    IF tollgate_private.others_key(p_logical) IS NOT NULL THEN
        RAISE EXCEPTION 'tollgate_lock_key: the key % was recorded by another role while this call waited for its lock; an agent''s role locks only its own keys and new ones', p_logical
            USING ERRCODE = 'serialization_failure';
    END IF;
    -- A record in the WAL even when nothing else is written (a retry
    -- that finds its answer stored): its COMMIT then waits for
    -- synchronous standbys like any write, so no caller is answered from
    -- a fact a failover could still lose (TestPostgresCommitAnswerLost).
    -- A transaction id alone would not: PostgreSQL skips the wait for a
    -- transaction that wrote no WAL before its commit record.
    PERFORM pg_logical_emit_message(true, 'tollgate', '');
    -- The transaction's time, read once the locks are held.
    RETURN (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
END $$;

-- The one-call functions that take a key's lock keep their text but for
-- that one statement, which becomes the bounded wait: their latest
-- versions (tollgate_private.key_new of schema 24, tollgate_report of 22
-- with schema 23's gate) are read back from the catalog, as schema 23
-- did, and each must hold the statement exactly once.
DO $$
DECLARE
    f regprocedure;
    v_def text;
    v_var text;
    v_old text;
BEGIN
    FOR f, v_var IN SELECT x.f::regprocedure, x.v FROM (VALUES
        ('tollgate_private.key_new(text, text, text, text, text, text, text, text, text, text, text, text)', 'p_logical'),
        ('tollgate_report(text, text, text, text, bigint, text, bigint)', 'v_logical')) x(f, v) LOOP
        v_def := pg_get_functiondef(f);
        v_old := format('PERFORM pg_advisory_xact_lock(1953459309, hashtext(%s));', v_var);
        IF (length(v_def) - length(replace(v_def, v_old, ''))) <> length(v_old) THEN
            RAISE EXCEPTION 'schema 29: % does not take the key''s lock once as schema 24 wrote it', f;
        END IF;
        EXECUTE replace(v_def, v_old, format('IF NOT pg_try_advisory_xact_lock(1953459309, hashtext(%s)) THEN PERFORM tollgate_private.lock_key(%s); END IF;', v_var, v_var));
    END LOOP;
END $$;

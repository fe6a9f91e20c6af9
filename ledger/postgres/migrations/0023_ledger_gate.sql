-- Schema 23: the ledger-wide lock is a table lock no agent or operator
-- role can take (issue 25; TestPostgresAgentCannotHoldTheLedgerLock).
--
-- Until now it was the advisory lock (1953459308, 0): taken shared by
-- every key transaction, guard and report (tollgate_lock_key,
-- tollgate_guard, tollgate_report) and exclusive by writers of
-- ledger-wide facts (tollgate_lock_head). PostgreSQL grants
-- pg_advisory_lock to PUBLIC, so an agent's role that ran
-- SELECT pg_advisory_lock(1953459308, 0) held it for as long as its
-- session lived, and every other guard, report and decision waited and
-- failed; only a superuser could take the function back.
--
-- Now the lock is a relation lock on tollgate_private.ledger_gate, a
-- table that never holds a row: ROW SHARE where the shared advisory
-- lock was taken, EXCLUSIVE where the exclusive one was (EXCLUSIVE
-- conflicts with ROW SHARE and with itself, ROW SHARE with neither of
-- the weak modes others may hold). No role but the schema's owner may
-- use the schema tollgate_private (schema 10), so no other role can name
-- the table, and PostgreSQL 15's LOCK TABLE needs, beyond that, UPDATE,
-- DELETE or TRUNCATE on the table for every mode but ACCESS SHARE (which
-- needs SELECT, and conflicts only with ACCESS EXCLUSIVE, which tollgate
-- never takes); SELECT ... FOR UPDATE or FOR SHARE needs UPDATE; a view,
-- a child table or a foreign key over it needs SELECT, ownership or
-- REFERENCES. The table is in no view and no role is granted anything
-- on it. A function that locks a relation by its number alone
-- (pg_relation_size and its kin) takes ACCESS SHARE, which blocks no
-- lock tollgate takes. ROW SHARE is a weak lock: PostgreSQL takes it on
-- its fast path, in the backend's own memory, as long as nobody holds or
-- waits for a strong lock on the table, so a guard pays for it what it
-- paid for the advisory lock (docs/postgresql.md).
--
-- What remains: each logical key's lock is still the advisory lock
-- (1953459309, hashtext(key)). An agent's role that takes it with
-- pg_advisory_lock stops that key (every agent's guard, report or
-- decision of it) for as long as its session lives, not the ledger
-- (docs/postgres-roles.md; doctor's pg.advisory-locks names the
-- superuser's REVOKE that closes it).
CREATE TABLE tollgate_private.ledger_gate (one boolean);
REVOKE ALL ON tollgate_private.ledger_gate FROM PUBLIC;

-- The functions that took the shared advisory lock keep their text but
-- for that one statement, which becomes the table's ROW SHARE lock:
-- their latest versions (tollgate_lock_key of schema 13, tollgate_guard
-- of 21, tollgate_report of 22) are read back from the catalog rather
-- than copied here, and each must hold the statement exactly once.
-- CREATE OR REPLACE keeps their grants.
DO $$
DECLARE
    f regprocedure;
    v_def text;
    v_old constant text := 'PERFORM pg_advisory_xact_lock_shared(1953459308, 0);';
    v_new constant text := 'LOCK TABLE tollgate_private.ledger_gate IN ROW SHARE MODE;';
BEGIN
    FOREACH f IN ARRAY ARRAY['tollgate_lock_key(text)',
        'tollgate_guard(text, text, text, text, text, text, text, text, text, bigint, text, boolean, bigint)',
        'tollgate_report(text, text, text, text, bigint, text, bigint)']::regprocedure[] LOOP
        v_def := pg_get_functiondef(f);
        IF (length(v_def) - length(replace(v_def, v_old, ''))) <> length(v_old) THEN
            RAISE EXCEPTION 'schema 23: % does not take the ledger-wide lock once as schema 22 wrote it', f;
        END IF;
        EXECUTE replace(v_def, v_old, v_new);
    END LOOP;
END $$;

-- tollgate_lock_head of schema 20 with the table's EXCLUSIVE lock, the
-- same half-second bound per attempt, and the holders named from the
-- table's relation locks (every mode but ACCESS SHARE, which does not
-- conflict with it).
CREATE OR REPLACE FUNCTION tollgate_lock_head(OUT o_seq bigint, OUT o_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_prev text := current_setting('lock_timeout');
    v_holders text;
BEGIN
    BEGIN
        -- The caller's own bound when it is shorter (its attempt's time).
        IF v_prev IN ('0', '') OR v_prev::interval > interval '500 ms' THEN
            PERFORM set_config('lock_timeout', '500ms', true);
        END IF;
        LOCK TABLE tollgate_private.ledger_gate IN EXCLUSIVE MODE;
        PERFORM set_config('lock_timeout', v_prev, true);
    EXCEPTION WHEN lock_not_available THEN
        SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'relation' AND l.relation = 'tollgate_private.ledger_gate'::regclass
                AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                AND l.mode <> 'AccessShareLock' AND l.granted AND l.pid <> pg_backend_pid();
        RAISE EXCEPTION 'the ledger-wide lock is held by %; a change of rules, operators, epochs or decisions waits for it', coalesce(v_holders, 'another session')
            USING ERRCODE = 'lock_not_available';
    END;
    SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1 FOR UPDATE;
    PERFORM tollgate_private.seal_pending();
    SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1;
END $$;

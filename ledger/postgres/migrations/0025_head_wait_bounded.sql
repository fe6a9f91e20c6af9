-- Schema 25: an operator's ledger-wide change waits for the chain head
-- under the same half-second bound as for the ledger-wide lock, and names
-- who holds it (TestPostgresGuardHoleAgentHoldsChainHead).
--
-- tollgate_seal is granted to agents: it seals pending events into the
-- chain and holds the head's row until its transaction ends. An agent's
-- role that called it in a transaction it left open made every
-- operator's decision wait for the head with no bound of ours (the
-- client's attempt ran out: "read the chain head: timeout", naming no
-- one), and the waiting decision held the ledger-wide lock exclusively,
-- so every guard queued behind it. Now the head's wait is bounded too:
-- after half a second the change gives up (55P03), its subtransaction
-- lets go of the ledger-wide lock so the guards queued behind it go on
-- (a guard commits its events pending when the head is busy, schema 16),
-- and the message names the head's holder (the transaction whose id is
-- the row's lock), which an operator can end with pg_terminate_backend.
CREATE OR REPLACE FUNCTION tollgate_lock_head(OUT o_seq bigint, OUT o_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_prev text := current_setting('lock_timeout');
    v_what text := 'the ledger-wide lock';
    v_holders text;
BEGIN
    BEGIN
        -- The caller's own bound when it is shorter (its attempt's time).
        IF v_prev IN ('0', '') OR v_prev::interval > interval '500 ms' THEN
            PERFORM set_config('lock_timeout', '500ms', true);
        END IF;
        LOCK TABLE tollgate_private.ledger_gate IN EXCLUSIVE MODE;
        v_what := 'the chain head';
        SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1 FOR UPDATE;
        PERFORM set_config('lock_timeout', v_prev, true);
    EXCEPTION WHEN lock_not_available THEN
        IF v_what = 'the chain head' THEN
            -- A row lock shows in pg_locks only as its holder's
            -- transaction id, which is the row's xmax.
            SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
                FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
                    AND l.transactionid::text = (SELECT h.xmax::text FROM chain_head h WHERE h.one = 1)
                    AND l.pid <> pg_backend_pid();
        ELSE
            SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
                FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'relation' AND l.relation = 'tollgate_private.ledger_gate'::regclass
                    AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                    AND l.mode <> 'AccessShareLock' AND l.granted AND l.pid <> pg_backend_pid();
        END IF;
        RAISE EXCEPTION '% is held by %; a change of rules, operators, epochs or decisions waits for it', v_what, coalesce(v_holders, 'another session')
            USING ERRCODE = 'lock_not_available';
    END;
    PERFORM tollgate_private.seal_pending();
    SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1;
END $$;

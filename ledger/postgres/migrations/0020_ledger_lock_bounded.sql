-- Schema 20: an agent's role can no longer freeze every guard through
-- the ledger-wide lock by way of tollgate's own functions
-- (TestPostgresGuardHoleAgentFreezesGuards). Two ways were open:
--
-- * tollgate_lock_head, which takes the ledger-wide lock alone, was
--   granted to tollgate_agent (schema 8), so an agent that called it in a
--   transaction it left open stopped every key transaction and guard. An
--   agent writes nothing ledger-wide (rules, operators, epochs, decisions
--   and archives are operators' facts; from this version a store that
--   groups its writes, as `mcp serve` does, writes each key on its own
--   transaction on PostgreSQL), so the grant is taken back.
-- * An agent that leaves open a transaction holding the lock shared (any
--   guard's call holds it to its commit) made an operator's ledger-wide
--   change wait for it, and PostgreSQL queues every later guard behind the
--   waiting change: all of them failed at their attempt's end. The
--   change now waits for the lock at most half a second per attempt,
--   then gives up (55P03, naming the sessions that hold it) and is tried
--   again by the client within its retry budget, so that guards queued
--   behind it wait at most that long and go on; the change goes through
--   once the holder ends, or fails with the holders named.
--
-- The lock itself is still an advisory lock, which any role may take
-- with pg_advisory_lock: that way stays open (docs/postgres-roles.md).
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
        PERFORM pg_advisory_xact_lock(1953459308, 0);
        PERFORM set_config('lock_timeout', v_prev, true);
    EXCEPTION WHEN lock_not_available THEN
        SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.classid = 1953459308 AND l.objid = 0 AND l.granted AND l.pid <> pg_backend_pid();
        RAISE EXCEPTION 'the ledger-wide lock is held by %; a change of rules, operators, epochs or decisions waits for it', coalesce(v_holders, 'another session')
            USING ERRCODE = 'lock_not_available';
    END;
    SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1 FOR UPDATE;
    PERFORM tollgate_private.seal_pending();
    SELECT seq, hash INTO o_seq, o_hash FROM chain_head WHERE one = 1;
END $$;

REVOKE EXECUTE ON FUNCTION tollgate_lock_head() FROM tollgate_agent;

-- Schema 30: an operator's decision waits for the chain head only at its
-- end, under the half-second bound, naming the holder.
--
-- approve, reject and reconcile are not one call (an operator's
-- signature is made over the stored row and checked in Go). Up to here
-- they ran as writes of the whole ledger, which lock the chain head
-- (tollgate_lock_head) before their first read: 15 round trips with the
-- head held for 13, in which no event was sealed and no other operator
-- could decide any key. They now run as key transactions (the key's lock
-- and the ledger-wide lock shared, tollgate_lock_key), and take the head
-- just before appending their events: this function, which waits for the
-- head's row as tollgate_lock_head does (the caller's bound or half a
-- second, whichever is shorter) and, when it cannot have it, names the
-- transaction that holds it (55P03), which an operator can end. A key
-- transaction of a guard or a report waits for the head in
-- tollgate_append_events, as before.
CREATE FUNCTION tollgate_wait_head() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_prev text := current_setting('lock_timeout');
    v_holders text;
BEGIN
    BEGIN
        IF v_prev IN ('0', '') OR v_prev::interval > interval '500 ms' THEN
            PERFORM set_config('lock_timeout', '500ms', true);
        END IF;
        PERFORM 1 FROM chain_head WHERE one = 1 FOR UPDATE;
        PERFORM set_config('lock_timeout', v_prev, true);
    EXCEPTION WHEN lock_not_available THEN
        -- A row lock shows in pg_locks only as its holder's transaction
        -- id, which is the row's xmax.
        SELECT string_agg(DISTINCT format('%s (pid %s)', a.usename, a.pid), ', ') INTO v_holders
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
                AND l.transactionid::text = (SELECT h.xmax::text FROM chain_head h WHERE h.one = 1)
                AND l.pid <> pg_backend_pid();
        RAISE EXCEPTION 'the chain head is held by %; a change of rules, operators, epochs or decisions waits for it', coalesce(v_holders, 'another session')
            USING ERRCODE = 'lock_not_available';
    END;
END $$;
REVOKE ALL ON FUNCTION tollgate_wait_head() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tollgate_wait_head() TO tollgate_operator;

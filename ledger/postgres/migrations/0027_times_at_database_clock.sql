-- Schema 27: a report's lateness is judged by the database's clock, and
-- the times an agent's facts carry are the database's (SPEC 8: deadlines
-- and leases are judged by the database's clock). Found by the attacking
-- pass (TestPostgresGuardHoleAgentBackdatesReport): a report's time was
-- the client's, checked within 60 s of the database's clock
-- (tollgate_clock_ok), and a report was late only when that time was past
-- the lease; an agent's role that reported after its lease ran out, from
-- a store whose clock ran 21 s slow, was taken as on time, and the key an
-- operator was shown as uncertain read succeeded.
--
-- Honest clients do not need the 60 s: the one-call functions read
-- clock_timestamp(), and the client's key transaction on PostgreSQL
-- reads the database's clock with its locks (Store.beginKey), so a fact's
-- time differs from the database's by the transaction's own latency.
-- Where the bound is on (not lifted for tests on an injected clock, not a
-- copy), two rules, in a trigger of their own that runs before each
-- table's other rules:
--
--  * a report's, a permit's or an approval request's time is within 2 s
--    of the database's clock at its insert (the request's time starts its
--    TTL, the permit's its lease);
--  * a report is accepted (on time) only while the database's clock is
--    before the permit's lease; after it, the report is late evidence.
--
-- The first is refused as any fact against the rules is (TG002, exit 77,
-- nothing stored): a time 2 s off is a clock of the client's own, which
-- retrying does not mend. The second fails with 40001, which clients
-- retry with a new reading of the clock: an honest transaction that read
-- the time just before the lease ran out and inserted its report just
-- after is retried and stores its report as late.
CREATE FUNCTION tollgate_private.at_database_time() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_now bigint;
    v_at bigint;
    v_lease bigint;
BEGIN
    IF tollgate_copying() OR tollgate_clock_ok(0) THEN
        RETURN NEW; -- a copy's times are its source's; tollgate_clock_ok(0) holds only where the bound is lifted
    END IF;
    v_now := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    -- The time column is the trigger's argument: one function for the
    -- three tables, each naming its own column.
    v_at := (to_jsonb(NEW) ->> TG_ARGV[0])::bigint;
    IF abs(v_now - v_at) > 2000 THEN
        PERFORM tollgate_refuse(NEW.action_key, format('%s at %s ms is %s ms from the database''s clock: a fact''s time is the database''s (SPEC 8)',
            TG_ARGV[1], v_at, v_at - v_now));
    END IF;
    -- Read through jsonb: a row of another table has no kind.
    IF TG_TABLE_NAME = 'reports' AND to_jsonb(NEW) ->> 'kind' = 'accepted' THEN
        SELECT lease_ms INTO v_lease FROM permits WHERE action_key = NEW.action_key;
        IF FOUND AND v_now >= v_lease THEN
            RAISE EXCEPTION 'key %: the lease ran out at % ms by the database''s clock (now % ms): a report now is late, not accepted (SPEC 8)',
                NEW.action_key, v_lease, v_now USING ERRCODE = 'serialization_failure';
        END IF;
    END IF;
    RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION tollgate_private.at_database_time() FROM PUBLIC;

-- Triggers fire in the order of their names: these run before each
-- table's *_follow_rules.
CREATE TRIGGER reports_at_database_time BEFORE INSERT ON reports
    FOR EACH ROW EXECUTE FUNCTION tollgate_private.at_database_time('at_ms', 'a report');
CREATE TRIGGER permits_at_database_time BEFORE INSERT ON permits
    FOR EACH ROW EXECUTE FUNCTION tollgate_private.at_database_time('issued_ms', 'a permit');
CREATE TRIGGER approval_requests_at_database_time BEFORE INSERT ON approval_requests
    FOR EACH ROW EXECUTE FUNCTION tollgate_private.at_database_time('requested_ms', 'an approval request');

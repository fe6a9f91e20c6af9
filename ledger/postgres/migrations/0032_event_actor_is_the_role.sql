-- Schema 32: an event's actor is the role's, as its facts are.
--
-- The actor is who the console's timeline, status and export say took a
-- step. Schema 15 checks that an agent's role appends only events of
-- facts it wrote in the same transaction, and schemas 28 and 31 that
-- those facts name an agent the login role may act as; the event's own
-- actor was taken as sent, so an agent's role could append the event of
-- its own honest payload row naming an operator (or another agent) as
-- the one who recorded it. Now an agent's role's event names an agent
-- the role may act as (its own name, or one an operator allowed), and a
-- report's event names the permit the report was filed under, as the
-- client writes them. Refused as the other event rules are (TG002, exit
-- 77, nothing stored). Nothing is paid when the actor is the role's own
-- name, which is the default agent name on PostgreSQL.

CREATE OR REPLACE FUNCTION tollgate_check_event() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    f record;
    v_xmin xid;
    v_key text;
    v_row jsonb;
    v_bad text;
BEGIN
    IF tollgate_copying() OR tollgate_sealing() THEN RETURN NEW; END IF;
    IF NEW.fact_table = '' THEN
        IF NEW.fact_row <> '' OR NEW.fact_sha256 <> '' THEN
            v_bad := 'names a fact row but no table';
        ELSIF NEW.type IN (SELECT type FROM tollgate_private.fact_events) THEN
            v_bad := 'commits no fact row though its type commits one';
        ELSIF tollgate_agent_only() AND NOT (NEW.type = 'disagreement_flagged'
                AND EXISTS (SELECT 1 FROM reports r WHERE r.action_key = NEW.action_key AND tollgate_xmin_mine(r.xmin)
                    AND r.permit_id = NEW.actor)) THEN
            v_bad := 'is not an event an agent''s role appends';
        END IF;
    ELSE
        SELECT * INTO f FROM tollgate_private.fact_events e WHERE e.fact_table = NEW.fact_table AND e.type = NEW.type;
        IF NOT FOUND THEN
            v_bad := 'names a table its type does not commit';
        ELSIF tollgate_agent_only() AND NOT f.agents THEN
            v_bad := 'commits a fact an agent''s role does not write';
        ELSE
            EXECUTE format('SELECT t.xmin, %s, to_jsonb(t) FROM %s t WHERE t.%I::text = $1',
                    CASE WHEN f.key_col = '' THEN '''''::text' ELSE 't.' || quote_ident(f.key_col) || '::text' END,
                    coalesce(to_regclass('tollgate_private.' || quote_ident(f.fact_table)), ('public.' || quote_ident(f.fact_table))::regclass),
                    f.id_col)
                INTO v_xmin, v_key, v_row USING NEW.fact_row;
            IF v_xmin IS NULL THEN
                v_bad := 'names a fact row that does not exist';
            ELSIF NOT tollgate_xmin_mine(v_xmin) THEN
                v_bad := 'names a fact row another transaction wrote';
            ELSIF f.key_col <> '' AND v_key IS DISTINCT FROM NEW.action_key THEN
                v_bad := 'names a fact row of another key';
            ELSIF f.agents AND NEW.fact_sha256 IS DISTINCT FROM tollgate_fact_hash(NEW.fact_table, v_row) THEN
                v_bad := 'names a fact row with another hash';
            ELSIF EXISTS (SELECT 1 FROM events e WHERE e.fact_table = NEW.fact_table AND e.fact_row = NEW.fact_row)
                    OR EXISTS (SELECT 1 FROM pending_events e WHERE e.fact_table = NEW.fact_table AND e.fact_row = NEW.fact_row) THEN
                v_bad := 'names a fact row another event commits';
            ELSIF tollgate_agent_only() AND NEW.actor IS DISTINCT FROM session_user THEN
                IF NEW.fact_table IN ('reports', 'report_refusals') THEN
                    IF NEW.actor IS DISTINCT FROM v_row ->> 'permit_id' THEN
                        v_bad := 'names an actor other than the permit it reports under';
                    END IF;
                ELSIF NOT tollgate_private.agent_name_allowed(NEW.actor) THEN
                    v_bad := format('names %s as its actor, a name the role %s may not act as (tollgate agents allow)', NEW.actor, session_user);
                END IF;
            END IF;
        END IF;
    END IF;
    IF v_bad IS NOT NULL THEN
        PERFORM tollgate_refuse(NEW.action_key, format('a %s event that %s', NEW.type, v_bad));
    END IF;
    RETURN NEW;
END $$;

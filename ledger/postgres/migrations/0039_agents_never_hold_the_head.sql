-- Schema 39: no agent's role ever locks the chain head (issue 41).
--
-- Up to here an agent's role took the head's row lock whenever it was
-- free: tollgate_guard, tollgate_record and tollgate_report with SKIP
-- LOCKED, tollgate_append_event(s) and tollgate_flush (the client's key
-- transaction) and tollgate_seal waiting for it. A row lock lasts until
-- its transaction ends, and the agent writes the transaction: BEGIN;
-- SELECT tollgate_guard(<a new key> ...); SELECT pg_sleep(40); kept the
-- head, and every operator's decision, which appends its events to the
-- chain in its own transaction (schema 30), waited half a second per
-- attempt and failed after 30 s with exit 75. Sessions that are active
-- are outside idle_in_transaction_session_timeout's reach, an operator's
-- role cannot end another role's backend, and the agent reconnects. A
-- bound inside the statement would not help: one statement can run
-- pg_sleep after the call.
--
-- Now an agent's role's events are always committed pending (schema 16's
-- pending_events: complete but for their number, previous hash and
-- hash, checked by the same trigger as a sealed event when they are
-- written), and sealed into the chain, as they are and in pending-id
-- order, by the next writer that is not an agent's role: an operator's
-- decision, vote, reconciliation or ledger-wide change (each seals what
-- is pending before appending its own events), the owner's migrate or
-- copy, tollgate_seal called by an operator's role or the owner (as
-- `tollgate serve` may, though nothing here depends on it). The chain's
-- hash, its order, verify's checks of a pending event against its fact
-- row and of the sealed chain are unchanged; what changes is who moves
-- the head. An agent's role keeps every other lock it had: its own keys'
-- advisory locks (a decision of that key waits for it, bounded and
-- named, schema 29), the ledger-wide gate shared (which no decision
-- waits for; a ledger-wide change waits half a second per attempt,
-- schema 20), and rows it inserts (unique keys no decision writes).
--
-- An agent's call in a transaction of REPEATABLE READ or SERIALIZABLE is
-- refused (0A000): its snapshot may predate a change of rules or epochs
-- the ledger-wide lock then waited for, which the head's FOR UPDATE used
-- to catch (40001, TestPostgresGuardAttackStaleSnapshot); without the
-- head nothing would. tollgate's clients write in READ COMMITTED.

-- Whether the calling session's events go pending: true for a role that
-- is neither an operator's nor the schema's owner (tollgate_agent_only),
-- which must then be in READ COMMITTED.
CREATE FUNCTION tollgate_private.agent_pends() RETURNS boolean
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
BEGIN
    IF NOT tollgate_agent_only() THEN
        RETURN false;
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'an agent''s role writes in READ COMMITTED transactions only: a snapshot taken before the ledger-wide lock may predate a change of rules or epochs (isolation %)',
            current_setting('transaction_isolation') USING ERRCODE = '0A000';
    END IF;
    RETURN true;
END $$;
REVOKE ALL ON FUNCTION tollgate_private.agent_pends() FROM PUBLIC;

-- The one-call functions (tollgate_guard and tollgate_record through
-- key_finish, tollgate_report) take the head only when it is free and
-- the caller is not an agent's role; an agent's call commits its events
-- pending and answers no pending id (o_unsealed NULL), since it could
-- not seal them. Their latest text is read back from the catalog, as
-- schema 23 did, and each replaced statement must occur exactly once.
-- Replaces, in the latest text of function fn as the catalog holds it,
-- the statement old, which must occur exactly once, with new, and
-- re-creates the function (CREATE OR REPLACE keeps its grants). A
-- migration that changes one statement of a long function uses it rather
-- than copying the function; schema names the migration in its error.
CREATE FUNCTION tollgate_private.replace_in_function(p_schema int, p_fn regprocedure, p_old text, p_new text) RETURNS void
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
    v_def text := pg_get_functiondef(p_fn);
BEGIN
    IF (length(v_def) - length(replace(v_def, p_old, ''))) <> length(p_old) THEN
        RAISE EXCEPTION 'schema %: % does not hold, once, the statement the previous schema wrote: %', p_schema, p_fn, p_old;
    END IF;
    EXECUTE replace(v_def, p_old, p_new);
END $$;
REVOKE ALL ON FUNCTION tollgate_private.replace_in_function(int, regprocedure, text, text) FROM PUBLIC;

SELECT tollgate_private.replace_in_function(39, t.fn::regprocedure, t.old, t.new) FROM (VALUES
        ('tollgate_private.key_finish(text, text, text, bigint, text[], text[], text[], text[])',
         E'    IF current_setting(''transaction_isolation'') <> ''read committed'' THEN\n        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;',
         E'    IF tollgate_private.agent_pends() THEN\n        PERFORM 1 WHERE false;\n    ELSIF current_setting(''transaction_isolation'') <> ''read committed'' THEN\n        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;'),
        ('tollgate_private.key_finish(text, text, text, bigint, text[], text[], text[], text[])',
         E'    RETURN v_unsealed;',
         E'    RETURN CASE WHEN v_unsealed IS NOT NULL AND tollgate_agent_only() THEN NULL ELSE v_unsealed END;'),
        ('tollgate_report(text, text, text, text, bigint, text, bigint)',
         E'    IF current_setting(''transaction_isolation'') <> ''read committed'' THEN\n        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;',
         E'    IF tollgate_private.agent_pends() THEN\n        PERFORM 1 WHERE false;\n    ELSIF current_setting(''transaction_isolation'') <> ''read committed'' THEN\n        PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;'),
        ('tollgate_report(text, text, text, text, bigint, text, bigint)',
         E'RETURNING id INTO o_unsealed;\n    END IF;',
         E'RETURNING id INTO o_unsealed;\n        IF tollgate_agent_only() THEN\n            o_unsealed := NULL;\n        END IF;\n    END IF;')
,
        -- The client's path (tollgate_flush calls it; so may a
        -- hand-written transaction): an agent's role's events are checked
        -- and committed pending, and no head is answered (NULL); anyone
        -- else's are appended after what is pending, as before.
        ('tollgate_append_events(text[], text[], text[], text[], bigint[], text[], text[], text[])',
         E'    PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;',
         E'    IF tollgate_private.agent_pends() THEN\n        INSERT INTO pending_events (action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256)\n            SELECT k, t, a, d, at, ft, fr, fs FROM unnest(p_keys, p_types, p_actors, p_details, p_ats, p_fact_tables, p_fact_rows, p_fact_sha256s) WITH ORDINALITY AS e(k, t, a, d, at, ft, fr, fs, n) ORDER BY n;\n        RETURN;\n    END IF;\n    PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;'),
        ('tollgate_append_event(text, text, text, text, bigint, text, text, text)',
         E'    PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;',
         E'    IF tollgate_private.agent_pends() THEN\n        INSERT INTO pending_events (action_key, type, actor, detail, at_ms, fact_table, fact_row, fact_sha256)\n            VALUES (p_key, p_type, p_actor, p_detail, p_at, p_fact_table, p_fact_row, p_fact_sha256);\n        RETURN;\n    END IF;\n    PERFORM 1 FROM chain_head h WHERE h.one = 1 FOR UPDATE;')
,
        -- Sealing is not an agent's: its call answers 0 and locks nothing.
        ('tollgate_seal(bigint, bigint)',
         E'(SELECT 1 FROM pending_events WHERE p_through IS NULL OR id <= p_through) THEN',
         E'(SELECT 1 FROM pending_events WHERE p_through IS NULL OR id <= p_through) OR tollgate_agent_only() THEN')
    ) AS t(fn, old, new);

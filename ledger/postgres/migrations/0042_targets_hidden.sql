-- Schema 42: other roles' targets are hidden like their bodies (issue 41).
--
-- The projection (action_index) kept every key's target in clear, and
-- every role reads the projection: an agent's role read every other
-- agent's targets (an IBAN in the trial), though bodies are hidden from
-- it (schema 10) and the docs' list of what it sees did not name them.
-- Now the table lives in tollgate_private, where no role but the owner
-- reaches it, behind a view of its name in public with the same columns,
-- which shows a target only to the login role that wrote the key's
-- payload, to members of tollgate_operator and to the owner (the rule
-- payloads.canonical follows); any other role reads an empty target, as
-- a redacted key's reads. Every other column stays visible, so status,
-- list and the guard's one-round-trip answer work for any key.
--
-- The projection's two writers, tollgate_index_intent and
-- tollgate_refresh_index (whose text the state machine makes, at
-- migrations 8 and 13 and in a copy), name the table without a schema:
-- they now look in tollgate_private first, so each writes the table, on
-- this schema and on every older one a test or a copy creates. The
-- owner's writes that bypass them (a copy, an archive run) name the
-- table itself (ledger/postgres Table).
ALTER TABLE action_index SET SCHEMA tollgate_private;
CREATE VIEW public.action_index AS
    SELECT x.id, x.action_key, x.logical_key, x.epoch, x.kind, x.agent, x.stage, x.deadline_ms, x.updated_ms, x.payload_sha256,
        x.retained, x.redacted,
        CASE WHEN x.target = '' OR (SELECT tollgate_sees_bodies())
            OR EXISTS (SELECT 1 FROM tollgate_private.payloads p WHERE p.action_key = x.action_key AND p.db_role = session_user)
            THEN x.target ELSE '' END AS target,
        x.context_sha256, x.answer
    FROM tollgate_private.action_index x;
GRANT SELECT ON public.action_index TO tollgate_agent, tollgate_operator;
ALTER FUNCTION tollgate_index_intent() SET search_path = tollgate_private, public, pg_temp;
-- The state machine makes tollgate_refresh_index after the schema (a copy
-- into an empty database runs every migration first): there it does not
-- exist yet, and its text already looks in tollgate_private first.
DO $$
BEGIN
    IF to_regprocedure('tollgate_refresh_index(text, text)') IS NOT NULL THEN
        ALTER FUNCTION tollgate_refresh_index(text, text) SET search_path = tollgate_private, public, pg_temp;
    END IF;
END $$;

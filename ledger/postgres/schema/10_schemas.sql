-- tollgate's PostgreSQL ledger: the roles and schemas. The schema is
-- defined once, in these files, run in the order of their names in one
-- transaction by the schema's owner (postgres.go): 10_schemas.sql (roles
-- and schemas), 20_tables.sql (tables, constraints, indexes and the
-- static rows), 30_views.sql, 40_functions.sql (the agent and operator
-- functions and the trigger functions), 50_triggers.sql (the append-only
-- and fact-check triggers) and 60_grants.sql (what each role may do).
-- tollgate_refresh_index alone is made by the Go code (ledger/state.go),
-- from the very SQL verify checks the projection with.
--
-- The roles (SPEC 8). Agents guard, record, report and read; operators
-- also decide, reconcile, set policy, activate epochs, review and manage
-- operators. Neither may UPDATE, DELETE or TRUNCATE a fact, and neither
-- writes the chain or the projection but through the functions.
-- Roles belong to the cluster, so another database's ledger may have
-- made them already, or be making them at this moment.
DO $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['tollgate_agent', 'tollgate_operator'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;
            END;
        END IF;
    END LOOP;
END $$;

-- What no role but the owner reaches: the payload bodies and conflicts
-- behind views that hide another role's, and the schema's own state.
-- Objects (pgschema-fold.py writes what follows, up to the rows):

CREATE SCHEMA tollgate_private;

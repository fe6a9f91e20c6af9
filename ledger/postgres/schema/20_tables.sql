-- tollgate's PostgreSQL ledger: the tables, their sequences, constraints
-- and indexes, and the static rows. Every table but action_index,
-- chain_head and the schema's own state is evidence: rows are appended,
-- never updated or deleted (50_triggers.sql), and each fact row is
-- committed by the event that records it (its table, key and the SHA-256
-- of its columns, covered by the event's hash), so verify proves each
-- fact row by its event and each event by its row. The columns, checks
-- and keys are the SQLite ledger's (ledger/sqlite/schema/tables.sql
-- says why each is there); here each text column compares bytes (COLLATE
-- "C"), as SQLite does.
-- Objects (pgschema-fold.py writes what follows, up to the rows):

-- Schema 36: the service's identities (issue 44, SPEC 12); the SQLite
-- migration 19 says what the two tables hold. Here as there they are
-- facts committed by events and, on a signed ledger, signed by the
-- operator who wrote them.
--
-- Who reads and writes them:
-- * agent_tokens holds each token's digest. An agent's role must not
--   learn another's (nor its own, nor the names and scopes of others'),
--   so tollgate_agent has no SELECT on it: only an operator's role and
--   the schema's owner read it, and only they hold EXECUTE on its insert
--   function. A verify run as an agent's role proves the events that
--   commit these rows but not the rows, and says so (unreadable_tables).
-- * principal_names (the names a service principal may act as) holds no
--   secret: both roles read it, only an operator's role writes it.
-- PostgreSQL login roles keep their own map (tollgate_private.agent_names,
-- schema 28), which the database checks on every write of a role; this
-- one is what `tollgate serve` checks for the principals it
-- authenticates (a token's name, a socket peer's Unix user).
CREATE TABLE public.agent_tokens (
    id bigint NOT NULL,
    token_id text NOT NULL COLLATE pg_catalog."C",
    action text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    name_key text NOT NULL COLLATE pg_catalog."C",
    scope text NOT NULL COLLATE pg_catalog."C",
    digest text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT agent_tokens_action_check CHECK ((action = ANY (ARRAY['create'::text, 'revoke'::text]))),
    CONSTRAINT agent_tokens_check CHECK ((((action = 'create'::text) AND (digest ~ '^[0-9a-f]{64}$'::text)) OR ((action = 'revoke'::text) AND (digest = ''::text)))),
    CONSTRAINT agent_tokens_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT agent_tokens_name_key_check CHECK ((length(name_key) > 0)),
    CONSTRAINT agent_tokens_operator_check CHECK ((length(operator) > 0)),
    CONSTRAINT agent_tokens_scope_check CHECK ((scope = ANY (ARRAY['agent'::text, 'operator'::text]))),
    CONSTRAINT agent_tokens_token_id_check CHECK ((token_id ~ '^[0-9a-f]{16}$'::text))
);

CREATE TABLE public.approval_requests (
    action_key text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    requested_ms bigint NOT NULL,
    expires_ms bigint NOT NULL,
    CONSTRAINT approval_requests_check CHECK ((expires_ms > requested_ms))
);

-- Retention (schema 9, SPEC 11); see the SQLite migration of the same
-- number. The tables exist here so that the state machine's reads are the
-- same on both engines; archive itself runs on SQLite ledgers only (an
-- archive is a ledger file).
CREATE TABLE public.archives (
    id bigint NOT NULL,
    file text NOT NULL COLLATE pg_catalog."C",
    ledger_id text NOT NULL COLLATE pg_catalog."C",
    through_seq bigint NOT NULL,
    through_hash text NOT NULL COLLATE pg_catalog."C",
    head_seq bigint NOT NULL,
    head_hash text NOT NULL COLLATE pg_catalog."C",
    keys bigint NOT NULL,
    keys_sha256 text NOT NULL COLLATE pg_catalog."C",
    spans bigint NOT NULL,
    spans_sha256 text NOT NULL COLLATE pg_catalog."C",
    settled_before_ms bigint NOT NULL,
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT archives_file_check CHECK (((length(file) >= 1) AND (length(file) <= 4096))),
    CONSTRAINT archives_head_hash_check CHECK ((head_hash ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT archives_keys_check CHECK ((keys >= 0)),
    CONSTRAINT archives_keys_sha256_check CHECK ((keys_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT archives_spans_check CHECK ((spans >= 0)),
    CONSTRAINT archives_spans_sha256_check CHECK ((spans_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT archives_through_hash_check CHECK ((through_hash ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT archives_through_seq_check CHECK ((through_seq >= 0))
);

CREATE TABLE public.conflict_reviews (
    conflict_id bigint NOT NULL,
    operator text NOT NULL COLLATE pg_catalog."C",
    note text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT conflict_reviews_operator_check CHECK ((length(operator) > 0))
);

CREATE TABLE tollgate_private.conflicts (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    stored_sha256 text NOT NULL COLLATE pg_catalog."C",
    attempted_sha256 text NOT NULL COLLATE pg_catalog."C",
    attempted text,
    redacted bigint NOT NULL,
    differs text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT conflicts_attempted_sha256_check CHECK ((attempted_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT conflicts_redacted_check CHECK ((redacted = ANY (ARRAY[(0)::bigint, (1)::bigint]))),
    CONSTRAINT conflicts_stored_sha256_check CHECK ((length(stored_sha256) = 64))
);

-- session_user is the database role that wrote the decision, beside the
-- operator's name and signature (SPEC 8): not part of the row hash, so a
-- ledger copied between engines proves the same.
CREATE TABLE public.decisions (
    action_key text NOT NULL COLLATE pg_catalog."C",
    decision text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    reason text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT decisions_check CHECK (((decision = 'approved'::text) OR (length(reason) > 0))),
    CONSTRAINT decisions_decision_check CHECK ((decision = ANY (ARRAY['approved'::text, 'rejected'::text]))),
    CONSTRAINT decisions_operator_check CHECK ((length(operator) > 0))
);

CREATE TABLE public.epochs (
    seq bigint NOT NULL,
    epoch text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT epochs_epoch_check CHECK ((length(epoch) = 36))
);

CREATE TABLE public.fenced (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    key_epoch text NOT NULL COLLATE pg_catalog."C",
    active_epoch text NOT NULL COLLATE pg_catalog."C",
    payload_sha256 text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    reason text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT fenced_payload_sha256_check CHECK ((length(payload_sha256) = 64))
);

CREATE TABLE public.fenced_reviews (
    fenced_id bigint NOT NULL,
    operator text NOT NULL COLLATE pg_catalog."C",
    note text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT fenced_reviews_operator_check CHECK ((length(operator) > 0))
);

CREATE TABLE public.operators (
    id bigint NOT NULL,
    name text NOT NULL COLLATE pg_catalog."C",
    name_key text NOT NULL COLLATE pg_catalog."C",
    action text NOT NULL COLLATE pg_catalog."C",
    public_key text NOT NULL COLLATE pg_catalog."C",
    fingerprint text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT operators_action_check CHECK ((action = ANY (ARRAY['add'::text, 'remove'::text]))),
    CONSTRAINT operators_fingerprint_check CHECK ((fingerprint ~~ 'SHA256:%'::text)),
    CONSTRAINT operators_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT operators_name_key_check CHECK ((length(name_key) > 0))
);

CREATE TABLE tollgate_private.payloads (
    action_key text NOT NULL COLLATE pg_catalog."C",
    payload_sha256 text NOT NULL COLLATE pg_catalog."C",
    canonical text COLLATE pg_catalog."C",
    redacted bigint NOT NULL,
    kind text NOT NULL COLLATE pg_catalog."C",
    kind_sha256 text NOT NULL COLLATE pg_catalog."C",
    target_sha256 text NOT NULL COLLATE pg_catalog."C",
    body_sha256 text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    recorded_ms bigint NOT NULL,
    context_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    context text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT payloads_body_sha256_check CHECK ((length(body_sha256) = 64)),
    CONSTRAINT payloads_canonical_check CHECK (((canonical IS NULL) OR (length(canonical) >= 30))),
    CONSTRAINT payloads_check CHECK (((redacted = 1) = (canonical IS NULL))),
    CONSTRAINT payloads_context_check CHECK ((length(context) <= 8192)),
    CONSTRAINT payloads_context_sha256_check CHECK (((context_sha256 = ''::text) OR (context_sha256 ~ '^[0-9a-f]{64}$'::text))),
    CONSTRAINT payloads_kind_sha256_check CHECK ((length(kind_sha256) = 64)),
    CONSTRAINT payloads_payload_sha256_check CHECK ((payload_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT payloads_redacted_check CHECK ((redacted = ANY (ARRAY[(0)::bigint, (1)::bigint]))),
    CONSTRAINT payloads_target_sha256_check CHECK ((length(target_sha256) = 64))
);

-- Schema 38: a permit remembers the attempt that was issued it; the
-- SQLite migration 20 says why, and why only a digest is kept.
--
-- An agent's fact: written by the guard's key transaction through its
-- insert function (both roles), committed by an event of that
-- transaction, its hash checked by the event's trigger. The database
-- also holds that the row names the permit its own transaction wrote for
-- that key, with that permit's agent (so no role attaches an attempt to
-- another's permit), and that the agent is one the login role may act
-- as. The one-call guard (tollgate_guard) does not write it: a guard
-- that carries an attempt id takes the client's key transaction, which
-- does.
CREATE TABLE public.permit_attempts (
    action_key text NOT NULL COLLATE pg_catalog."C",
    permit_id text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    attempt_sha256 text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT permit_attempts_attempt_sha256_check CHECK ((attempt_sha256 ~ '^[0-9a-f]{64}$'::text))
);

CREATE TABLE public.permits (
    action_key text NOT NULL COLLATE pg_catalog."C",
    permit_id text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    issued_ms bigint NOT NULL,
    lease_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT permits_check CHECK ((lease_ms > issued_ms)),
    CONSTRAINT permits_permit_id_check CHECK ((length(permit_id) = 36))
);

CREATE TABLE public.policy_evals (
    action_key text NOT NULL COLLATE pg_catalog."C",
    mode text NOT NULL COLLATE pg_catalog."C",
    ttl_ms bigint NOT NULL,
    rule_id bigint,
    pattern text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    approvers bigint DEFAULT 1 NOT NULL,
    explain text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT policy_evals_approvers_check CHECK (((approvers >= 1) AND (approvers <= 9))),
    CONSTRAINT policy_evals_mode_check CHECK ((mode = ANY (ARRAY['auto'::text, 'approval'::text, 'deny'::text])))
);

CREATE TABLE public.policy_rules (
    id bigint NOT NULL,
    pattern text NOT NULL COLLATE pg_catalog."C",
    mode text NOT NULL COLLATE pg_catalog."C",
    ttl_ms bigint NOT NULL,
    operator text NOT NULL COLLATE pg_catalog."C",
    set_ms bigint NOT NULL,
    approvers bigint DEFAULT 1 NOT NULL,
    condition text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    priority bigint DEFAULT 0 NOT NULL,
    CONSTRAINT policy_rules_approvers_check CHECK (((approvers >= 1) AND (approvers <= 9))),
    CONSTRAINT policy_rules_condition_check CHECK ((length(condition) <= 2000)),
    CONSTRAINT policy_rules_mode_check CHECK ((mode = ANY (ARRAY['auto'::text, 'approval'::text, 'deny'::text]))),
    CONSTRAINT policy_rules_pattern_check CHECK (((length(pattern) >= 1) AND (length(pattern) <= 200))),
    CONSTRAINT policy_rules_priority_check CHECK (((priority >= '-1000'::integer) AND (priority <= 1000))),
    CONSTRAINT policy_rules_ttl_ms_check CHECK ((ttl_ms >= 0))
);

CREATE TABLE public.principal_names (
    id bigint NOT NULL,
    who text NOT NULL COLLATE pg_catalog."C",
    who_key text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    agent_key text NOT NULL COLLATE pg_catalog."C",
    action text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT principal_names_action_check CHECK ((action = ANY (ARRAY['allow'::text, 'revoke'::text]))),
    CONSTRAINT principal_names_agent_check CHECK (((length(agent) >= 1) AND (length(agent) <= 200))),
    CONSTRAINT principal_names_agent_key_check CHECK ((length(agent_key) > 0)),
    CONSTRAINT principal_names_operator_check CHECK ((length(operator) > 0)),
    CONSTRAINT principal_names_who_check CHECK (((length(who) >= 1) AND (length(who) <= 200))),
    CONSTRAINT principal_names_who_key_check CHECK ((length(who_key) > 0))
);

CREATE TABLE public.reconciliations (
    action_key text NOT NULL COLLATE pg_catalog."C",
    result text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    note text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT reconciliations_note_check CHECK ((length(note) > 0)),
    CONSTRAINT reconciliations_operator_check CHECK ((length(operator) > 0)),
    CONSTRAINT reconciliations_result_check CHECK ((result = ANY (ARRAY['executed'::text, 'not-executed'::text])))
);

CREATE TABLE public.report_refusals (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    permit_id text NOT NULL COLLATE pg_catalog."C",
    outcome text NOT NULL COLLATE pg_catalog."C",
    ref text NOT NULL COLLATE pg_catalog."C",
    latency_ms bigint NOT NULL,
    rule text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL
);

CREATE TABLE public.reports (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    permit_id text NOT NULL COLLATE pg_catalog."C",
    outcome text NOT NULL COLLATE pg_catalog."C",
    ref text NOT NULL COLLATE pg_catalog."C",
    latency_ms bigint NOT NULL,
    kind text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    result text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT reports_kind_check CHECK ((kind = ANY (ARRAY['accepted'::text, 'late'::text, 'refused'::text]))),
    CONSTRAINT reports_latency_ms_check CHECK ((latency_ms >= 0)),
    CONSTRAINT reports_outcome_check CHECK ((outcome = ANY (ARRAY['succeeded'::text, 'failed'::text, 'unknown'::text]))),
    CONSTRAINT reports_result_check CHECK ((octet_length(result) <= 65536))
);

-- Evidence set aside; see the SQLite migration. On PostgreSQL no agent
-- role can insert a decisions row, so the table stays empty unless the
-- schema's owner forged one.
CREATE TABLE public.set_aside (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    fact_table text NOT NULL COLLATE pg_catalog."C",
    row_json text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    CONSTRAINT set_aside_fact_table_check CHECK ((fact_table = ANY (ARRAY['decisions'::text, 'votes'::text]))),
    CONSTRAINT set_aside_row_json_check CHECK ((length(row_json) <= 20000))
);

CREATE TABLE public.signatures (
    id bigint NOT NULL,
    fact_table text NOT NULL COLLATE pg_catalog."C",
    fact_row text NOT NULL COLLATE pg_catalog."C",
    fingerprint text NOT NULL COLLATE pg_catalog."C",
    signed_ms bigint NOT NULL,
    signature bytea NOT NULL,
    at_ms bigint NOT NULL,
    CONSTRAINT signatures_fingerprint_check CHECK ((fingerprint ~~ 'SHA256:%'::text))
);

CREATE TABLE public.votes (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    decision text NOT NULL COLLATE pg_catalog."C",
    operator text NOT NULL COLLATE pg_catalog."C",
    name_key text NOT NULL COLLATE pg_catalog."C",
    reason text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    db_role text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT votes_check CHECK (((decision = 'approved'::text) OR (length(reason) > 0))),
    CONSTRAINT votes_decision_check CHECK ((decision = ANY (ARRAY['approved'::text, 'rejected'::text]))),
    CONSTRAINT votes_name_key_check CHECK ((length(name_key) > 0)),
    CONSTRAINT votes_operator_check CHECK ((length(operator) > 0))
);

-- The projection: the one table that is updated (and the chain head).
CREATE TABLE tollgate_private.action_index (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    logical_key text NOT NULL COLLATE pg_catalog."C",
    epoch text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    kind text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    agent text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    stage text DEFAULT 'recorded'::text NOT NULL COLLATE pg_catalog."C",
    deadline_ms bigint DEFAULT 0 NOT NULL,
    updated_ms bigint DEFAULT 0 NOT NULL,
    payload_sha256 text NOT NULL COLLATE pg_catalog."C",
    retained bigint DEFAULT 0 NOT NULL,
    redacted bigint DEFAULT 0 NOT NULL,
    target text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    context_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    answer text GENERATED ALWAYS AS (((((((((payload_sha256 || stage) || ' '::text) || (deadline_ms)::text) || ' '::text) || ((retained + (2 * redacted)))::text) || context_sha256) || ' '::text) || agent)) STORED COLLATE pg_catalog."C",
    CONSTRAINT action_index_stage_check CHECK ((stage = ANY (ARRAY['recorded'::text, 'pending'::text, 'approved'::text, 'denied'::text, 'rejected'::text, 'executing'::text, 'uncertain'::text, 'succeeded'::text, 'failed'::text, 'reconciled'::text])))
);

ALTER TABLE public.agent_tokens ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.agent_tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Retention (schema 9, SPEC 11); see the SQLite migration of the same
-- number. The tables exist here so that the state machine's reads are the
-- same on both engines; archive itself runs on SQLite ledgers only (an
-- archive is a ledger file).
CREATE TABLE public.archived_keys (
    action_key text NOT NULL COLLATE pg_catalog."C",
    archive_id bigint NOT NULL,
    state text NOT NULL COLLATE pg_catalog."C",
    result text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    context_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT archived_keys_context_sha256_check CHECK (((context_sha256 = ''::text) OR (context_sha256 ~ '^[0-9a-f]{64}$'::text))),
    CONSTRAINT archived_keys_result_check CHECK ((result = ANY (ARRAY[''::text, 'executed'::text, 'not-executed'::text]))),
    CONSTRAINT archived_keys_state_check CHECK ((state = ANY (ARRAY['denied'::text, 'rejected'::text, 'expired'::text, 'succeeded'::text, 'failed'::text, 'reconciled'::text])))
);

CREATE TABLE public.chain_head (
    one bigint NOT NULL,
    seq bigint NOT NULL,
    hash text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT chain_head_hash_check CHECK ((length(hash) = 64)),
    CONSTRAINT chain_head_one_check CHECK ((one = 1)),
    CONSTRAINT chain_head_seq_check CHECK ((seq >= 0))
);

ALTER TABLE public.epochs ALTER COLUMN seq ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.epochs_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.events (
    seq bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    actor text NOT NULL COLLATE pg_catalog."C",
    detail text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    prev_hash text NOT NULL COLLATE pg_catalog."C",
    hash text NOT NULL COLLATE pg_catalog."C",
    fact_table text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    fact_row text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    fact_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    hv bigint DEFAULT 2 NOT NULL,
    CONSTRAINT events_hash_check CHECK ((hash ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT events_hv_check CHECK ((hv = ANY (ARRAY[(1)::bigint, (2)::bigint]))),
    CONSTRAINT events_prev_hash_check CHECK ((prev_hash ~ '^[0-9a-f]{64}$'::text))
);

ALTER TABLE public.fenced ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.fenced_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.intents (
    action_key text NOT NULL COLLATE pg_catalog."C",
    payload_sha256 text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL COLLATE pg_catalog."C",
    db_role text DEFAULT SESSION_USER COLLATE pg_catalog."C",
    CONSTRAINT intents_payload_sha256_check CHECK ((payload_sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT intents_status_check CHECK ((status = 'recorded'::text))
);

CREATE TABLE public.ledger_meta (
    one bigint NOT NULL,
    ledger_id text NOT NULL COLLATE pg_catalog."C",
    created_ms bigint NOT NULL,
    CONSTRAINT ledger_meta_ledger_id_check CHECK ((length(ledger_id) = 36)),
    CONSTRAINT ledger_meta_one_check CHECK ((one = 1))
);

ALTER TABLE public.operators ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.operators_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- The events committed and not yet sealed. An agent's role reads them
-- and writes them only through tollgate_guard; only sealing deletes one,
-- in the transaction that appends it to the chain.
CREATE TABLE public.pending_events (
    id bigint NOT NULL,
    action_key text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    actor text NOT NULL COLLATE pg_catalog."C",
    detail text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    fact_table text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    fact_row text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    fact_sha256 text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C"
);

ALTER TABLE public.pending_events ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.pending_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- A condition's translation, one per rule, written with the rule.
CREATE TABLE public.policy_conditions (
    rule_id bigint NOT NULL,
    ast text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT policy_conditions_ast_check CHECK ((length(ast) <= 65536))
);

ALTER TABLE public.policy_rules ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.policy_rules_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE public.principal_names ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.principal_names_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Retention (schema 9, SPEC 11); see the SQLite migration of the same
-- number. The tables exist here so that the state machine's reads are the
-- same on both engines; archive itself runs on SQLite ledgers only (an
-- archive is a ledger file).
CREATE TABLE public.pruned_events (
    first_seq bigint NOT NULL,
    last_seq bigint NOT NULL,
    first_prev text NOT NULL COLLATE pg_catalog."C",
    last_hash text NOT NULL COLLATE pg_catalog."C",
    archive_id bigint NOT NULL,
    CONSTRAINT pruned_events_check CHECK ((last_seq >= first_seq)),
    CONSTRAINT pruned_events_first_prev_check CHECK ((first_prev ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT pruned_events_last_hash_check CHECK ((last_hash ~ '^[0-9a-f]{64}$'::text))
);

ALTER TABLE public.report_refusals ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.report_refusals_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE public.reports ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.reports_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE public.set_aside ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.set_aside_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE public.signatures ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.signatures_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.tollgate_schema (
    version bigint NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE public.votes ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.votes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE tollgate_private.action_index ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME tollgate_private.action_index_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE tollgate_private.agent_names (
    role text NOT NULL COLLATE pg_catalog."C",
    agent text NOT NULL COLLATE pg_catalog."C",
    added_by text DEFAULT SESSION_USER NOT NULL COLLATE pg_catalog."C",
    added_ms bigint DEFAULT ((EXTRACT(epoch FROM clock_timestamp()) * (1000)::numeric))::bigint NOT NULL,
    CONSTRAINT agent_names_agent_check CHECK ((agent <> ''::text)),
    CONSTRAINT agent_names_role_check CHECK ((role <> ''::text))
);

ALTER TABLE tollgate_private.conflicts ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME tollgate_private.conflicts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Which event commits a row of which table (ledger/facts.go factTables),
-- the tables an agent's role writes, and each table's row number column.
CREATE TABLE tollgate_private.fact_events (
    fact_table text NOT NULL COLLATE pg_catalog."C",
    type text NOT NULL COLLATE pg_catalog."C",
    id_col text NOT NULL COLLATE pg_catalog."C",
    key_col text NOT NULL COLLATE pg_catalog."C",
    agents boolean NOT NULL
);

-- The columns a row hash of an agent's fact covers (ledger/facts.go
-- factTables cols and optional), in order; an optional column is left
-- out at its default, and named first when tagged.
CREATE TABLE tollgate_private.fact_hash_cols (
    fact_table text NOT NULL COLLATE pg_catalog."C",
    n integer NOT NULL,
    col text NOT NULL COLLATE pg_catalog."C",
    opt_def text COLLATE pg_catalog."C",
    tagged boolean NOT NULL
);

CREATE UNLOGGED TABLE tollgate_private.guard_writing (
    txid bigint NOT NULL
);

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
CREATE TABLE tollgate_private.ledger_gate (
    one boolean
);

-- The transactions sealing at this moment (at most one: sealing holds
-- the head): an event appended by one is a pending event, already
-- checked when its own transaction wrote it, and a pending row it
-- deletes is one it has just sealed. No role but the schema's owner
-- writes this table, and only tollgate_private.seal_pending does.
CREATE TABLE tollgate_private.sealing (
    txid bigint NOT NULL
);

ALTER TABLE ONLY public.agent_tokens
    ADD CONSTRAINT agent_tokens_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.agent_tokens
    ADD CONSTRAINT agent_tokens_token_id_action_key UNIQUE (token_id, action);

ALTER TABLE ONLY public.approval_requests
    ADD CONSTRAINT approval_requests_pkey PRIMARY KEY (action_key);

ALTER TABLE ONLY public.archived_keys
    ADD CONSTRAINT archived_keys_pkey PRIMARY KEY (action_key);

ALTER TABLE ONLY public.archives
    ADD CONSTRAINT archives_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.chain_head
    ADD CONSTRAINT chain_head_pkey PRIMARY KEY (one);

ALTER TABLE ONLY public.conflict_reviews
    ADD CONSTRAINT conflict_reviews_pkey PRIMARY KEY (conflict_id);

ALTER TABLE ONLY public.decisions
    ADD CONSTRAINT decisions_pkey PRIMARY KEY (action_key);

ALTER TABLE ONLY public.epochs
    ADD CONSTRAINT epochs_epoch_key UNIQUE (epoch);

ALTER TABLE ONLY public.epochs
    ADD CONSTRAINT epochs_pkey PRIMARY KEY (seq);

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (seq);

ALTER TABLE ONLY public.fenced
    ADD CONSTRAINT fenced_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.fenced_reviews
    ADD CONSTRAINT fenced_reviews_pkey PRIMARY KEY (fenced_id);

ALTER TABLE ONLY public.intents
    ADD CONSTRAINT intents_pkey PRIMARY KEY (action_key);

ALTER TABLE ONLY public.ledger_meta
    ADD CONSTRAINT ledger_meta_pkey PRIMARY KEY (one);

ALTER TABLE ONLY public.operators
    ADD CONSTRAINT operators_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.pending_events
    ADD CONSTRAINT pending_events_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.permit_attempts
    ADD CONSTRAINT permit_attempts_pkey PRIMARY KEY (action_key);

ALTER TABLE ONLY public.permits
    ADD CONSTRAINT permits_permit_id_key UNIQUE (permit_id);

ALTER TABLE ONLY public.permits
    ADD CONSTRAINT permits_pkey PRIMARY KEY (action_key);

ALTER TABLE ONLY public.policy_conditions
    ADD CONSTRAINT policy_conditions_pkey PRIMARY KEY (rule_id);

ALTER TABLE ONLY public.policy_evals
    ADD CONSTRAINT policy_evals_pkey PRIMARY KEY (action_key);

ALTER TABLE ONLY public.policy_rules
    ADD CONSTRAINT policy_rules_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.principal_names
    ADD CONSTRAINT principal_names_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.pruned_events
    ADD CONSTRAINT pruned_events_last_seq_key UNIQUE (last_seq);

ALTER TABLE ONLY public.pruned_events
    ADD CONSTRAINT pruned_events_pkey PRIMARY KEY (first_seq);

ALTER TABLE ONLY public.reconciliations
    ADD CONSTRAINT reconciliations_pkey PRIMARY KEY (action_key);

ALTER TABLE ONLY public.report_refusals
    ADD CONSTRAINT report_refusals_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.reports
    ADD CONSTRAINT reports_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.set_aside
    ADD CONSTRAINT set_aside_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.signatures
    ADD CONSTRAINT signatures_fact_table_fact_row_key UNIQUE (fact_table, fact_row);

ALTER TABLE ONLY public.signatures
    ADD CONSTRAINT signatures_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.tollgate_schema
    ADD CONSTRAINT tollgate_schema_pkey PRIMARY KEY (version);

ALTER TABLE ONLY public.votes
    ADD CONSTRAINT votes_action_key_name_key_key UNIQUE (action_key, name_key);

ALTER TABLE ONLY public.votes
    ADD CONSTRAINT votes_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tollgate_private.action_index
    ADD CONSTRAINT action_index_action_key_key UNIQUE (action_key);

ALTER TABLE ONLY tollgate_private.action_index
    ADD CONSTRAINT action_index_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tollgate_private.agent_names
    ADD CONSTRAINT agent_names_pkey PRIMARY KEY (role, agent);

ALTER TABLE ONLY tollgate_private.conflicts
    ADD CONSTRAINT conflicts_pkey PRIMARY KEY (id);

ALTER TABLE ONLY tollgate_private.fact_events
    ADD CONSTRAINT fact_events_pkey PRIMARY KEY (fact_table, type);

ALTER TABLE ONLY tollgate_private.fact_hash_cols
    ADD CONSTRAINT fact_hash_cols_pkey PRIMARY KEY (fact_table, n);

ALTER TABLE ONLY tollgate_private.guard_writing
    ADD CONSTRAINT guard_writing_pkey PRIMARY KEY (txid);

ALTER TABLE ONLY tollgate_private.payloads
    ADD CONSTRAINT payloads_pkey PRIMARY KEY (action_key);

ALTER TABLE ONLY tollgate_private.sealing
    ADD CONSTRAINT sealing_pkey PRIMARY KEY (txid);

CREATE INDEX events_fact ON public.events USING btree (fact_table, fact_row);

CREATE INDEX events_key ON public.events USING btree (action_key, seq);

CREATE INDEX fenced_key ON public.fenced USING btree (action_key);

CREATE INDEX pending_events_fact ON public.pending_events USING btree (fact_table, fact_row);

CREATE INDEX pending_events_key ON public.pending_events USING btree (action_key, id);

CREATE INDEX policy_rules_pattern ON public.policy_rules USING btree (pattern, id);

CREATE INDEX principal_names_pair ON public.principal_names USING btree (who_key, agent_key, id);

CREATE INDEX report_refusals_key ON public.report_refusals USING btree (action_key, id);

CREATE INDEX reports_key ON public.reports USING btree (action_key, id);

CREATE UNIQUE INDEX reports_one_accepted ON public.reports USING btree (action_key) WHERE (kind = 'accepted'::text);

CREATE INDEX set_aside_key ON public.set_aside USING btree (action_key, id);

CREATE UNIQUE INDEX signatures_once ON public.signatures USING btree (signature);

CREATE INDEX action_index_open ON tollgate_private.action_index USING btree (stage, deadline_ms) WHERE (stage = ANY (ARRAY['pending'::text, 'approved'::text, 'executing'::text, 'uncertain'::text]));

CREATE INDEX conflicts_key ON tollgate_private.conflicts USING btree (action_key);

ALTER TABLE ONLY public.approval_requests
    ADD CONSTRAINT approval_requests_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);

ALTER TABLE ONLY public.conflict_reviews
    ADD CONSTRAINT conflict_reviews_conflict_id_fkey FOREIGN KEY (conflict_id) REFERENCES tollgate_private.conflicts(id);

ALTER TABLE ONLY public.decisions
    ADD CONSTRAINT decisions_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.approval_requests(action_key);

ALTER TABLE ONLY public.fenced_reviews
    ADD CONSTRAINT fenced_reviews_fenced_id_fkey FOREIGN KEY (fenced_id) REFERENCES public.fenced(id);

ALTER TABLE ONLY public.permits
    ADD CONSTRAINT permits_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);

ALTER TABLE ONLY public.policy_conditions
    ADD CONSTRAINT policy_conditions_rule_id_fkey FOREIGN KEY (rule_id) REFERENCES public.policy_rules(id);

ALTER TABLE ONLY public.policy_evals
    ADD CONSTRAINT policy_evals_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);

ALTER TABLE ONLY public.policy_evals
    ADD CONSTRAINT policy_evals_rule_id_fkey FOREIGN KEY (rule_id) REFERENCES public.policy_rules(id);

ALTER TABLE ONLY public.reconciliations
    ADD CONSTRAINT reconciliations_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.permits(action_key);

ALTER TABLE ONLY public.reports
    ADD CONSTRAINT reports_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.permits(action_key);

ALTER TABLE ONLY public.votes
    ADD CONSTRAINT votes_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.approval_requests(action_key);

ALTER TABLE ONLY tollgate_private.conflicts
    ADD CONSTRAINT conflicts_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);

ALTER TABLE ONLY tollgate_private.payloads
    ADD CONSTRAINT payloads_action_key_fkey FOREIGN KEY (action_key) REFERENCES public.intents(action_key);

-- Rows (kept by pgschema-fold.py):
-- The static rows. The chain head starts at seq 0 and the zero hash; the
-- checks of schema 15 read, for each fact table, the events that may
-- commit a row of it (fact_events) and the columns its row hash covers
-- (fact_hash_cols), which must stay as ledger/events.go hashes them.
INSERT INTO public.chain_head VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
INSERT INTO tollgate_private.fact_events VALUES ('payloads', 'recorded', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('conflicts', 'conflict', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('policy_rules', 'policy_set', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('policy_evals', 'policy_evaluated', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('approval_requests', 'approval_requested', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('decisions', 'approved', 'action_key', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('decisions', 'rejected', 'action_key', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('permits', 'permit_issued', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('reports', 'report_accepted', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('reports', 'report_late', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('reports', 'report_refused', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('report_refusals', 'report_refused_unfiled', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('reconciliations', 'reconciled', 'action_key', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('epochs', 'epoch_activated', 'seq', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('fenced', 'fenced', 'id', 'action_key', true);
INSERT INTO tollgate_private.fact_events VALUES ('conflict_reviews', 'conflict_reviewed', 'conflict_id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('fenced_reviews', 'fenced_reviewed', 'fenced_id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('ledger_meta', 'ledger_created', 'one', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('operators', 'operator_added', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('operators', 'operator_removed', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('votes', 'vote', 'id', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('signatures', 'signed', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('archives', 'archive_checkpoint', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('set_aside', 'set_aside', 'id', 'action_key', false);
INSERT INTO tollgate_private.fact_events VALUES ('agent_tokens', 'token_created', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('agent_tokens', 'token_revoked', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('principal_names', 'principal_allowed', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('principal_names', 'principal_revoked', 'id', '', false);
INSERT INTO tollgate_private.fact_events VALUES ('permit_attempts', 'attempt_recorded', 'action_key', 'action_key', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 2, 'payload_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 3, 'canonical', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 4, 'redacted', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 5, 'kind', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 6, 'kind_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 7, 'target_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 8, 'body_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 9, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 10, 'recorded_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 11, 'context_sha256', '', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('payloads', 12, 'context', '', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 1, 'id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 2, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 3, 'stored_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 4, 'attempted_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 5, 'attempted', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 6, 'redacted', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 7, 'differs', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 8, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('conflicts', 9, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 2, 'mode', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 3, 'ttl_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 4, 'rule_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 5, 'pattern', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 6, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 7, 'approvers', '1', false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('policy_evals', 8, 'explain', '', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('approval_requests', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('approval_requests', 2, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('approval_requests', 3, 'requested_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('approval_requests', 4, 'expires_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 2, 'permit_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 3, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 4, 'issued_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permits', 5, 'lease_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 1, 'id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 2, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 3, 'permit_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 4, 'outcome', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 5, 'ref', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 6, 'latency_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 7, 'kind', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 8, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('reports', 9, 'result', '', true);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 1, 'id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 2, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 3, 'permit_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 4, 'outcome', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 5, 'ref', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 6, 'latency_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 7, 'rule', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('report_refusals', 8, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 1, 'id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 2, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 3, 'key_epoch', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 4, 'active_epoch', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 5, 'payload_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 6, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 7, 'reason', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('fenced', 8, 'at_ms', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 1, 'action_key', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 2, 'permit_id', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 3, 'agent', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 4, 'attempt_sha256', NULL, false);
INSERT INTO tollgate_private.fact_hash_cols VALUES ('permit_attempts', 5, 'at_ms', NULL, false);

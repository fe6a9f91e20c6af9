-- tollgate's PostgreSQL ledger: the append-only triggers (row and
-- statement triggers refuse UPDATE, DELETE and TRUNCATE of a fact, to the
-- owner as well) and the fact checks (each row a role stores is checked
-- against what the database knows: its payload's canonical text, the
-- agent names its role may use, the events that may commit it).
-- Objects (pgschema-fold.py writes what follows, up to the rows):

CREATE TRIGGER agent_tokens_append_only BEFORE DELETE OR UPDATE ON public.agent_tokens FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER agent_tokens_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.agent_tokens FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

-- Schema 31: the agent's name an approval request or a permit records is
-- bound to the login role as a payload's is (schema 28). The requester an
-- operator is shown for a recorded key asked later, and the agent a
-- permit names, were written from the name the guard sent: an agent's
-- role that recorded a key under its own name and then guarded it as
-- backup-bot made a request the console showed as backup-bot's. The same
-- check, the same exemptions (the owner's members, a copy), the same
-- refusal (TG002, exit 77, nothing stored), and nothing paid when the
-- name is the role's own.
CREATE TRIGGER approval_requests_agent_is_role BEFORE INSERT ON public.approval_requests FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();

CREATE TRIGGER approval_requests_agent_name BEFORE INSERT ON public.approval_requests FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_agent_name();

CREATE TRIGGER approval_requests_append_only BEFORE DELETE OR UPDATE ON public.approval_requests FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

-- Triggers fire in the order of their names: these run before each
-- table's *_follow_rules.
CREATE TRIGGER approval_requests_at_database_time BEFORE INSERT ON public.approval_requests FOR EACH ROW EXECUTE FUNCTION tollgate_private.at_database_time('requested_ms', 'an approval request');

CREATE CONSTRAINT TRIGGER approval_requests_committed_by_an_event AFTER INSERT ON public.approval_requests DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();

CREATE TRIGGER approval_requests_follow_rules BEFORE INSERT ON public.approval_requests FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_approval_request();

CREATE TRIGGER approval_requests_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.approval_requests FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER archived_keys_append_only BEFORE DELETE OR UPDATE ON public.archived_keys FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER archived_keys_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.archived_keys FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER archives_append_only BEFORE DELETE OR UPDATE ON public.archives FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER archives_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.archives FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER chain_head_forward BEFORE DELETE OR UPDATE ON public.chain_head FOR EACH ROW EXECUTE FUNCTION public.tollgate_head_forward();

CREATE TRIGGER chain_head_no_truncate BEFORE TRUNCATE ON public.chain_head FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER conflict_reviews_append_only BEFORE DELETE OR UPDATE ON public.conflict_reviews FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER conflict_reviews_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.conflict_reviews FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER decisions_append_only BEFORE DELETE OR UPDATE ON public.decisions FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER decisions_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.decisions FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER epochs_append_only BEFORE DELETE OR UPDATE ON public.epochs FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER epochs_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.epochs FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER events_append_only BEFORE DELETE OR UPDATE ON public.events FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER events_commit_own_facts BEFORE INSERT ON public.events FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_event();

CREATE TRIGGER events_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.events FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

-- Commits wake the console and watch (SPEC 8): the payload is the key only.
CREATE TRIGGER events_notify AFTER INSERT ON public.events FOR EACH ROW EXECUTE FUNCTION public.tollgate_notify();

-- Every fact table that names an agent (the projection, action_index,
-- is written from them).
CREATE TRIGGER fenced_agent_name BEFORE INSERT ON public.fenced FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_agent_name();

CREATE TRIGGER fenced_append_only BEFORE DELETE OR UPDATE ON public.fenced FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE CONSTRAINT TRIGGER fenced_committed_by_an_event AFTER INSERT ON public.fenced DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_fact_committed();

CREATE TRIGGER fenced_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.fenced FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER fenced_reviews_append_only BEFORE DELETE OR UPDATE ON public.fenced_reviews FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER fenced_reviews_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.fenced_reviews FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER intents_append_only BEFORE DELETE OR UPDATE ON public.intents FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE CONSTRAINT TRIGGER intents_carry_their_payload AFTER INSERT ON public.intents DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tollgate_private.check_intent_payload();

-- Every intent appears in the projection, whoever recorded it.
CREATE TRIGGER intents_index AFTER INSERT ON public.intents FOR EACH ROW EXECUTE FUNCTION public.tollgate_index_intent();

CREATE TRIGGER intents_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.intents FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER ledger_meta_append_only BEFORE DELETE OR UPDATE ON public.ledger_meta FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER ledger_meta_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.ledger_meta FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER operators_append_only BEFORE DELETE OR UPDATE ON public.operators FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER operators_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.operators FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER pending_events_commit_own_facts BEFORE INSERT ON public.pending_events FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_event();

-- A pending event is never changed; it leaves the table only sealed.
CREATE TRIGGER pending_events_kept BEFORE DELETE OR UPDATE ON public.pending_events FOR EACH ROW EXECUTE FUNCTION public.tollgate_pending_kept();

-- A pending event is never changed; it leaves the table only sealed.
CREATE TRIGGER pending_events_no_truncate BEFORE TRUNCATE ON public.pending_events FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

-- A pending event is never changed; it leaves the table only sealed.
CREATE TRIGGER pending_events_notify AFTER INSERT ON public.pending_events FOR EACH ROW EXECUTE FUNCTION public.tollgate_notify();

CREATE TRIGGER permit_attempts_agent_is_role BEFORE INSERT ON public.permit_attempts FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();

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
CREATE TRIGGER permit_attempts_append_only BEFORE DELETE OR UPDATE ON public.permit_attempts FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE CONSTRAINT TRIGGER permit_attempts_committed_by_an_event AFTER INSERT ON public.permit_attempts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_fact_committed();

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
CREATE TRIGGER permit_attempts_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.permit_attempts FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER permit_attempts_own_permit BEFORE INSERT ON public.permit_attempts FOR EACH ROW EXECUTE FUNCTION tollgate_private.check_attempt_permit();

-- Schema 31: the agent's name an approval request or a permit records is
-- bound to the login role as a payload's is (schema 28). The requester an
-- operator is shown for a recorded key asked later, and the agent a
-- permit names, were written from the name the guard sent: an agent's
-- role that recorded a key under its own name and then guarded it as
-- backup-bot made a request the console showed as backup-bot's. The same
-- check, the same exemptions (the owner's members, a copy), the same
-- refusal (TG002, exit 77, nothing stored), and nothing paid when the
-- name is the role's own.
CREATE TRIGGER permits_agent_is_role BEFORE INSERT ON public.permits FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();

CREATE TRIGGER permits_agent_name BEFORE INSERT ON public.permits FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_agent_name();

CREATE TRIGGER permits_append_only BEFORE DELETE OR UPDATE ON public.permits FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

-- Triggers fire in the order of their names: these run before each
-- table's *_follow_rules.
CREATE TRIGGER permits_at_database_time BEFORE INSERT ON public.permits FOR EACH ROW EXECUTE FUNCTION tollgate_private.at_database_time('issued_ms', 'a permit');

CREATE CONSTRAINT TRIGGER permits_committed_by_an_event AFTER INSERT ON public.permits DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();

CREATE TRIGGER permits_follow_rules BEFORE INSERT ON public.permits FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_permit();

CREATE TRIGGER permits_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.permits FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

-- A condition's translation, one per rule, written with the rule.
CREATE TRIGGER policy_conditions_append_only BEFORE DELETE OR UPDATE ON public.policy_conditions FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

-- A condition's translation, one per rule, written with the rule.
CREATE TRIGGER policy_conditions_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.policy_conditions FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER policy_evals_append_only BEFORE DELETE OR UPDATE ON public.policy_evals FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE CONSTRAINT TRIGGER policy_evals_committed_by_an_event AFTER INSERT ON public.policy_evals DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();

CREATE TRIGGER policy_evals_follow_rules BEFORE INSERT ON public.policy_evals FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_policy_eval();

CREATE TRIGGER policy_evals_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.policy_evals FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER policy_rules_append_only BEFORE DELETE OR UPDATE ON public.policy_rules FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER policy_rules_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.policy_rules FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER principal_names_append_only BEFORE DELETE OR UPDATE ON public.principal_names FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER principal_names_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.principal_names FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER pruned_events_append_only BEFORE DELETE OR UPDATE ON public.pruned_events FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER pruned_events_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.pruned_events FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER reconciliations_append_only BEFORE DELETE OR UPDATE ON public.reconciliations FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER reconciliations_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.reconciliations FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER report_refusals_append_only BEFORE DELETE OR UPDATE ON public.report_refusals FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE CONSTRAINT TRIGGER report_refusals_committed_by_an_event AFTER INSERT ON public.report_refusals DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_fact_committed();

CREATE TRIGGER report_refusals_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.report_refusals FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER reports_append_only BEFORE DELETE OR UPDATE ON public.reports FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

-- Triggers fire in the order of their names: these run before each
-- table's *_follow_rules.
CREATE TRIGGER reports_at_database_time BEFORE INSERT ON public.reports FOR EACH ROW EXECUTE FUNCTION tollgate_private.at_database_time('at_ms', 'a report');

CREATE CONSTRAINT TRIGGER reports_committed_by_an_event AFTER INSERT ON public.reports DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();

CREATE TRIGGER reports_follow_rules BEFORE INSERT ON public.reports FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_report();

CREATE TRIGGER reports_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.reports FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER set_aside_append_only BEFORE DELETE OR UPDATE ON public.set_aside FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER set_aside_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.set_aside FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER signatures_append_only BEFORE DELETE OR UPDATE ON public.signatures FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER signatures_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.signatures FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER votes_append_only BEFORE DELETE OR UPDATE ON public.votes FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER votes_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON public.votes FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER action_index_kept BEFORE DELETE ON tollgate_private.action_index FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER action_index_no_truncate BEFORE TRUNCATE ON tollgate_private.action_index FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER conflicts_agent_is_role BEFORE INSERT ON tollgate_private.conflicts FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();

-- Every fact table that names an agent (the projection, action_index,
-- is written from them).
CREATE TRIGGER conflicts_agent_name BEFORE INSERT ON tollgate_private.conflicts FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_agent_name();

CREATE TRIGGER conflicts_append_only BEFORE DELETE OR UPDATE ON tollgate_private.conflicts FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

CREATE CONSTRAINT TRIGGER conflicts_committed_by_an_event AFTER INSERT ON tollgate_private.conflicts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_fact_committed();

CREATE TRIGGER conflicts_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON tollgate_private.conflicts FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

CREATE TRIGGER payloads_agent_is_role BEFORE INSERT ON tollgate_private.payloads FOR EACH ROW WHEN ((new.agent IS DISTINCT FROM SESSION_USER)) EXECUTE FUNCTION tollgate_private.check_agent_is_role();

CREATE TRIGGER payloads_agent_name BEFORE INSERT ON tollgate_private.payloads FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_agent_name();

CREATE TRIGGER payloads_append_only BEFORE DELETE OR UPDATE ON tollgate_private.payloads FOR EACH ROW EXECUTE FUNCTION public.tollgate_append_only();

-- A payload row is what its canonical text says: the text is the
-- canonical encoding of its three fields (SPEC 2: no duplicate, extra or
-- missing field, no spaces, Python's escapes), each field at most 4000
-- code points (ledger/payload.go MaxFieldRunes), its SHA-256 the row's
-- digest, and the kind column and the kind, target and body digests
-- those of its fields; its context is in canonical form, with its
-- digest. A redacted row keeps no text: its kind column must still be
-- the kind its kind digest names, and its context is checked alike.
CREATE TRIGGER payloads_are_canonical BEFORE INSERT ON tollgate_private.payloads FOR EACH ROW EXECUTE FUNCTION public.tollgate_check_payload_row();

CREATE CONSTRAINT TRIGGER payloads_committed_by_an_event AFTER INSERT ON tollgate_private.payloads DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((NOT public.tollgate_guard_writing())) EXECUTE FUNCTION public.tollgate_check_fact_committed();

CREATE TRIGGER payloads_no_truncate BEFORE DELETE OR UPDATE OR TRUNCATE ON tollgate_private.payloads FOR EACH STATEMENT EXECUTE FUNCTION public.tollgate_append_only();

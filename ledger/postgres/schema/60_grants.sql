-- tollgate's PostgreSQL ledger: what each role may do. tollgate_agent
-- and tollgate_operator read the ledger and write through the functions;
-- neither holds INSERT, UPDATE, DELETE or TRUNCATE on a fact table, and
-- what the schema keeps for itself (tollgate_private) no role but the
-- owner reaches.
-- Objects (pgschema-fold.py writes what follows, up to the rows):

GRANT USAGE ON SCHEMA public TO tollgate_agent;
GRANT USAGE ON SCHEMA public TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_action_body(p_canonical text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_action_target(p_canonical text, p_target_sha256 text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_agent_allow(p_role text, p_agent text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_agent_allow(p_role text, p_agent text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_agent_names() FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_agent_names() TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_agent_revoke(p_role text, p_agent text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_agent_revoke(p_role text, p_agent text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint, p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint, p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_append_event(p_key text, p_type text, p_actor text, p_detail text, p_at bigint, p_fact_table text, p_fact_row text, p_fact_sha256 text, OUT o_seq bigint, OUT o_hash text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_append_events(p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], OUT o_seq bigint, OUT o_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_append_events(p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], OUT o_seq bigint, OUT o_hash text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_append_events(p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], OUT o_seq bigint, OUT o_hash text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_cel_action(p_kind text, p_target text, p_agent text, p_body text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_arith(op text, a jsonb, b jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_body_of(p jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_body_path(n jsonb, act jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_cmp(a jsonb, b jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_context(ctx jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_d(x double precision) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_eq(a jsonb, b jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_err(p_msg text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_eval(n jsonb, ctx jsonb, act jsonb, now_ns numeric) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_f8(p jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_getter(fn text, t jsonb, tz jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_of(p jsonb) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_cel_timestamp(p text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_check_approval_request() FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_check_permit() FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_check_policy_eval() FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_check_report() FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_clock_ok(p_at_ms bigint) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_condition_holds(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_condition_holds_cel(p_ast jsonb, ctx jsonb, act jsonb, now_ns numeric) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_copying() FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_drop_forged_vote(p_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_drop_forged_vote(p_id bigint) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_flush(p_events_first boolean, p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], p_index_keys text[], p_index_targets text[], OUT o_seq bigint, OUT o_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_flush(p_events_first boolean, p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], p_index_keys text[], p_index_targets text[], OUT o_seq bigint, OUT o_hash text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_flush(p_events_first boolean, p_keys text[], p_types text[], p_actors text[], p_details text[], p_ats bigint[], p_fact_tables text[], p_fact_rows text[], p_fact_sha256s text[], p_index_keys text[], p_index_targets text[], OUT o_seq bigint, OUT o_hash text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_go_json(p text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, p_attempt_sha256 text, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint, OUT o_agent text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, p_attempt_sha256 text, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint, OUT o_agent text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_guard(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_lease_ms bigint, p_permit_id text, p_retry boolean, p_wait_ms bigint, p_attempt_sha256 text, OUT o_path text, OUT o_answer text, OUT o_now bigint, OUT o_mode text, OUT o_rule bigint, OUT o_pattern text, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_permit_id text, OUT o_lease_ms bigint, OUT o_expires_ms bigint, OUT o_unsealed bigint, OUT o_agent text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_guard_writing() FROM PUBLIC;

GRANT SELECT ON TABLE public.agent_tokens TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_agent_tokens(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_agent_tokens(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.approval_requests TO tollgate_agent;
GRANT SELECT ON TABLE public.approval_requests TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_approval_requests(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_approval_requests(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_approval_requests(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.archives TO tollgate_agent;
GRANT SELECT ON TABLE public.archives TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_archives(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_archives(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.conflict_reviews TO tollgate_agent;
GRANT SELECT ON TABLE public.conflict_reviews TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_conflict_reviews(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_conflict_reviews(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.conflicts TO tollgate_agent;
GRANT SELECT ON TABLE public.conflicts TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_conflicts(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_conflicts(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_conflicts(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.decisions TO tollgate_agent;
GRANT SELECT ON TABLE public.decisions TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_decisions(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_decisions(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.epochs TO tollgate_agent;
GRANT SELECT ON TABLE public.epochs TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_epochs(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_epochs(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.fenced TO tollgate_agent;
GRANT SELECT ON TABLE public.fenced TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_fenced(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_fenced(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_fenced(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.fenced_reviews TO tollgate_agent;
GRANT SELECT ON TABLE public.fenced_reviews TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_fenced_reviews(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_fenced_reviews(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.operators TO tollgate_agent;
GRANT SELECT ON TABLE public.operators TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_operators(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_operators(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.payloads TO tollgate_agent;
GRANT SELECT ON TABLE public.payloads TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_payloads(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_payloads(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_payloads(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.permit_attempts TO tollgate_agent;
GRANT SELECT ON TABLE public.permit_attempts TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_permit_attempts(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_permit_attempts(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_permit_attempts(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.permits TO tollgate_agent;
GRANT SELECT ON TABLE public.permits TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_permits(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_permits(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_permits(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.policy_evals TO tollgate_agent;
GRANT SELECT ON TABLE public.policy_evals TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_policy_evals(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_policy_evals(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_policy_evals(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.policy_rules TO tollgate_agent;
GRANT SELECT ON TABLE public.policy_rules TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_policy_rules(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_policy_rules(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.principal_names TO tollgate_agent;
GRANT SELECT ON TABLE public.principal_names TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_principal_names(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_principal_names(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.reconciliations TO tollgate_agent;
GRANT SELECT ON TABLE public.reconciliations TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_reconciliations(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_reconciliations(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.report_refusals TO tollgate_agent;
GRANT SELECT ON TABLE public.report_refusals TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_report_refusals(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_report_refusals(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_report_refusals(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.reports TO tollgate_agent;
GRANT SELECT ON TABLE public.reports TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_reports(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_reports(p_cols text[], p_vals text[]) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_insert_reports(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.set_aside TO tollgate_agent;
GRANT SELECT ON TABLE public.set_aside TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_set_aside(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_set_aside(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.signatures TO tollgate_agent;
GRANT SELECT ON TABLE public.signatures TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_signatures(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_signatures(p_cols text[], p_vals text[]) TO tollgate_operator;

GRANT SELECT ON TABLE public.votes TO tollgate_agent;
GRANT SELECT ON TABLE public.votes TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_insert_votes(p_cols text[], p_vals text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_insert_votes(p_cols text[], p_vals text[]) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_lock_head(OUT o_seq bigint, OUT o_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_lock_head(OUT o_seq bigint, OUT o_hash text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_lock_key(p_logical text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_lock_key(p_logical text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_lock_key(p_logical text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_make_insert_fact(p_table text, p_roles text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_pattern_matches(p_pattern text, p_kind text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_pattern_specificity(p_pattern text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_policy_decide(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_record(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_record(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_record(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_record_intent(p_key text, p_sha256 text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_record_intent(p_key text, p_sha256 text) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_record_intent(p_key text, p_sha256 text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_refuse(p_key text, p_msg text) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_report(p_key text, p_permit_id text, p_outcome text, p_ref text, p_latency_ms bigint, p_result text, p_wait_ms bigint, OUT o_path text, OUT o_now bigint, OUT o_unsealed bigint) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_row_hash(p_table text, p_tags text[], p_vals text[]) FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_seal(p_through bigint, p_wait_ms bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_seal(p_through bigint, p_wait_ms bigint) TO tollgate_agent;
GRANT ALL ON FUNCTION public.tollgate_seal(p_through bigint, p_wait_ms bigint) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_sealing() FROM PUBLIC;

REVOKE ALL ON FUNCTION public.tollgate_set_condition(p_rule bigint, p_ast text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_set_condition(p_rule bigint, p_ast text) TO tollgate_operator;

REVOKE ALL ON FUNCTION public.tollgate_wait_head() FROM PUBLIC;
GRANT ALL ON FUNCTION public.tollgate_wait_head() TO tollgate_operator;

REVOKE ALL ON FUNCTION tollgate_private.agent_name_allowed(p_agent text) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.agent_pends() FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.at_database_time() FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.check_agent_is_role() FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.check_attempt_permit() FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.check_intent_payload() FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.key_finish(p_key text, p_target text, p_agent text, p_now bigint, p_types text[], p_details text[], p_tables text[], p_hashes text[]) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.key_new(p_fn text, p_key text, p_logical text, p_epoch text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, OUT o_now bigint, OUT o_go boolean) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.key_parse(p_fn text, p_key text, p_wait_ms bigint, OUT o_logical text, OUT o_epoch text) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.lock_key(p_logical text) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.others_key(p_logical text) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.policy_decide_at(p_kind text, p_target text, p_agent text, p_context text, p_body text, p_at_ms bigint, OUT o_mode text, OUT o_rule bigint, OUT o_ttl_ms bigint, OUT o_approvers bigint, OUT o_pattern text) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.record_write(p_key text, p_sha256 text, p_canonical text, p_kind text, p_target text, p_body_sha256 text, p_agent text, p_context_sha256 text, p_context text, p_now bigint, OUT o_types text[], OUT o_details text[], OUT o_tables text[], OUT o_hashes text[]) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.replace_in_function(p_schema integer, p_fn regprocedure, p_old text, p_new text) FROM PUBLIC;

REVOKE ALL ON FUNCTION tollgate_private.seal_pending() FROM PUBLIC;

GRANT SELECT ON TABLE tollgate_private.action_index TO tollgate_agent;
GRANT SELECT ON TABLE tollgate_private.action_index TO tollgate_operator;

GRANT SELECT ON TABLE public.action_index TO tollgate_agent;
GRANT SELECT ON TABLE public.action_index TO tollgate_operator;

GRANT SELECT ON TABLE public.archived_keys TO tollgate_agent;
GRANT SELECT ON TABLE public.archived_keys TO tollgate_operator;

GRANT SELECT ON TABLE public.chain_head TO tollgate_agent;
GRANT SELECT ON TABLE public.chain_head TO tollgate_operator;

GRANT SELECT ON TABLE public.events TO tollgate_agent;
GRANT SELECT ON TABLE public.events TO tollgate_operator;

GRANT SELECT ON TABLE public.intents TO tollgate_agent;
GRANT SELECT ON TABLE public.intents TO tollgate_operator;

GRANT SELECT ON TABLE public.ledger_meta TO tollgate_agent;
GRANT SELECT ON TABLE public.ledger_meta TO tollgate_operator;

GRANT SELECT ON TABLE public.pending_events TO tollgate_agent;
GRANT SELECT ON TABLE public.pending_events TO tollgate_operator;

GRANT SELECT ON TABLE public.policy_conditions TO tollgate_agent;
GRANT SELECT ON TABLE public.policy_conditions TO tollgate_operator;

GRANT SELECT ON TABLE public.pruned_events TO tollgate_agent;
GRANT SELECT ON TABLE public.pruned_events TO tollgate_operator;

GRANT SELECT ON TABLE public.tollgate_schema TO tollgate_agent;
GRANT SELECT ON TABLE public.tollgate_schema TO tollgate_operator;


--
--

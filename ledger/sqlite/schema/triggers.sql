-- tollgate's SQLite ledger: the triggers that keep evidence append-only
-- and check the facts the seed fixture's table cannot. Run after
-- tables.sql (schema.go), each defined once.
--
-- Every evidence table refuses UPDATE and DELETE. INSERT OR REPLACE,
-- REPLACE INTO and an upsert that replaces delete the row they collide
-- with (on ANY unique index) without firing its delete trigger unless
-- recursive_triggers is on, as it is not in a plain sqlite3 shell: each
-- table's _no_replace trigger refuses an insert whose key, or any other
-- unique value, is already there. verify names an edit made anyway; these
-- make sure none is made through SQL.

-- The seed fixture's table: its shape is fixed, so its hash shape is
-- held here.
CREATE TRIGGER intents_hash_shape BEFORE INSERT ON intents
WHEN length(NEW.payload_sha256) != 64 OR NEW.payload_sha256 GLOB '*[^0-9a-f]*'
BEGIN SELECT RAISE(ABORT, 'intents.payload_sha256 must be 64 lowercase hex digits'); END;
CREATE TRIGGER intents_no_update BEFORE UPDATE ON intents
BEGIN SELECT RAISE(ABORT, 'intents is append-only'); END;
CREATE TRIGGER intents_no_delete BEFORE DELETE ON intents
BEGIN SELECT RAISE(ABORT, 'intents is append-only'); END;

-- Intents recorded by anyone (the seed fixture included) appear in the
-- action index. A key already indexed, or archived (its intents row stays
-- behind), means the insert replaced an existing intent: refuse it. A
-- BEFORE trigger cannot do this, as it would also fire for the fixture's
-- ON CONFLICT DO NOTHING retry. A new row is numbered after the largest
-- id, as a rowid would be.
CREATE TRIGGER intents_index AFTER INSERT ON intents
BEGIN
    SELECT RAISE(ABORT, 'intents is append-only: a key is never replaced')
    WHERE EXISTS (SELECT 1 FROM action_index WHERE action_key = NEW.action_key)
       OR EXISTS (SELECT 1 FROM archived_keys WHERE action_key = NEW.action_key);
    INSERT INTO action_index(id, action_key, logical_key, payload_sha256)
        VALUES ((SELECT coalesce(max(id), 0) + 1 FROM action_index), NEW.action_key, NEW.action_key, NEW.payload_sha256);
END;

-- The projection may be updated, never deleted or replaced.
CREATE TRIGGER action_index_no_delete BEFORE DELETE ON action_index
BEGIN SELECT RAISE(ABORT, 'action_index rows are never deleted'); END;
CREATE TRIGGER action_index_no_replace BEFORE INSERT ON action_index
WHEN EXISTS (SELECT 1 FROM action_index WHERE id = NEW.id OR action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'action_index rows are never replaced'); END;

-- The chain head only moves forward and is never removed or replaced.
CREATE TRIGGER chain_head_forward BEFORE UPDATE ON chain_head
WHEN NEW.one IS NOT OLD.one OR NEW.seq <= OLD.seq
BEGIN
    SELECT RAISE(ABORT, 'the chain head only moves forward');
END;
CREATE TRIGGER chain_head_kept BEFORE DELETE ON chain_head
BEGIN
    SELECT RAISE(ABORT, 'the chain head is never removed');
END;
CREATE TRIGGER chain_head_no_replace BEFORE INSERT ON chain_head
WHEN EXISTS (SELECT 1 FROM chain_head)
BEGIN SELECT RAISE(ABORT, 'the chain head only moves forward: it is never replaced'); END;

-- The partial unique index reports_one_accepted is not covered by the id
-- check of reports_no_replace: an accepted report is never replaced.
CREATE TRIGGER reports_no_replace_accepted BEFORE INSERT ON reports
WHEN NEW.kind = 'accepted' AND EXISTS (SELECT 1 FROM reports WHERE action_key = NEW.action_key AND kind = 'accepted')
BEGIN SELECT RAISE(ABORT, 'reports is append-only: an accepted report is never replaced'); END;

-- archived_keys is a view over the compact stubs: inserting into it
-- stores the compact row. A word outside the vocabulary would encode as
-- NULL, which the NOT NULL constraint refuses; the message names the
-- rule instead. (The stubs' own triggers say archived_keys, the name
-- every reader knows them by.)
CREATE TRIGGER archived_keys_insert INSTEAD OF INSERT ON archived_keys
BEGIN
    SELECT RAISE(ABORT, 'archived_keys: state must be denied, rejected, expired, succeeded, failed or reconciled')
    WHERE NEW.state IS NULL OR NEW.state NOT IN ('denied', 'rejected', 'expired', 'succeeded', 'failed', 'reconciled');
    SELECT RAISE(ABORT, 'archived_keys: result must be empty, executed or not-executed')
    WHERE coalesce(NEW.result, '') NOT IN ('', 'executed', 'not-executed');
    INSERT INTO archived_stubs(action_key, archive_id, state, result, context_sha256) VALUES (
        NEW.action_key, NEW.archive_id,
        CASE NEW.state WHEN 'denied' THEN 0 WHEN 'rejected' THEN 1 WHEN 'expired' THEN 2
                       WHEN 'succeeded' THEN 3 WHEN 'failed' THEN 4 WHEN 'reconciled' THEN 5 END,
        CASE coalesce(NEW.result, '') WHEN '' THEN 0 WHEN 'executed' THEN 1 WHEN 'not-executed' THEN 2 END,
        coalesce(NEW.context_sha256, ''));
END;

-- Append-only evidence, table by table.

CREATE TRIGGER conflicts_no_update BEFORE UPDATE ON conflicts
BEGIN SELECT RAISE(ABORT, 'conflicts is append-only'); END;
CREATE TRIGGER conflicts_no_delete BEFORE DELETE ON conflicts
BEGIN SELECT RAISE(ABORT, 'conflicts is append-only'); END;
CREATE TRIGGER conflicts_no_replace BEFORE INSERT ON conflicts
WHEN EXISTS (SELECT 1 FROM conflicts WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'conflicts is append-only: a row is never replaced'); END;

CREATE TRIGGER policy_rules_no_update BEFORE UPDATE ON policy_rules
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only'); END;
CREATE TRIGGER policy_rules_no_delete BEFORE DELETE ON policy_rules
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only'); END;
CREATE TRIGGER policy_rules_no_replace BEFORE INSERT ON policy_rules
WHEN EXISTS (SELECT 1 FROM policy_rules WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only: a row is never replaced'); END;

CREATE TRIGGER approval_requests_no_update BEFORE UPDATE ON approval_requests
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only'); END;
CREATE TRIGGER approval_requests_no_delete BEFORE DELETE ON approval_requests
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only'); END;
CREATE TRIGGER approval_requests_no_replace BEFORE INSERT ON approval_requests
WHEN EXISTS (SELECT 1 FROM approval_requests WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only: a row is never replaced'); END;

CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions is append-only'); END;
CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions is append-only'); END;
CREATE TRIGGER decisions_no_replace BEFORE INSERT ON decisions
WHEN EXISTS (SELECT 1 FROM decisions WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'decisions is append-only: a row is never replaced'); END;

CREATE TRIGGER reports_no_update BEFORE UPDATE ON reports
BEGIN SELECT RAISE(ABORT, 'reports is append-only'); END;
CREATE TRIGGER reports_no_delete BEFORE DELETE ON reports
BEGIN SELECT RAISE(ABORT, 'reports is append-only'); END;
CREATE TRIGGER reports_no_replace BEFORE INSERT ON reports
WHEN EXISTS (SELECT 1 FROM reports WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'reports is append-only: a row is never replaced'); END;

CREATE TRIGGER reconciliations_no_update BEFORE UPDATE ON reconciliations
BEGIN SELECT RAISE(ABORT, 'reconciliations is append-only'); END;
CREATE TRIGGER reconciliations_no_delete BEFORE DELETE ON reconciliations
BEGIN SELECT RAISE(ABORT, 'reconciliations is append-only'); END;
CREATE TRIGGER reconciliations_no_replace BEFORE INSERT ON reconciliations
WHEN EXISTS (SELECT 1 FROM reconciliations WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'reconciliations is append-only: a row is never replaced'); END;

CREATE TRIGGER epochs_no_update BEFORE UPDATE ON epochs
BEGIN SELECT RAISE(ABORT, 'epochs is append-only'); END;
CREATE TRIGGER epochs_no_delete BEFORE DELETE ON epochs
BEGIN SELECT RAISE(ABORT, 'epochs is append-only'); END;
CREATE TRIGGER epochs_no_replace BEFORE INSERT ON epochs
WHEN EXISTS (SELECT 1 FROM epochs WHERE seq = NEW.seq OR epoch = NEW.epoch)
BEGIN SELECT RAISE(ABORT, 'epochs is append-only: a row is never replaced'); END;

CREATE TRIGGER fenced_no_update BEFORE UPDATE ON fenced
BEGIN SELECT RAISE(ABORT, 'fenced is append-only'); END;
CREATE TRIGGER fenced_no_delete BEFORE DELETE ON fenced
BEGIN SELECT RAISE(ABORT, 'fenced is append-only'); END;
CREATE TRIGGER fenced_no_replace BEFORE INSERT ON fenced
WHEN EXISTS (SELECT 1 FROM fenced WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'fenced is append-only: a row is never replaced'); END;

CREATE TRIGGER conflict_reviews_no_update BEFORE UPDATE ON conflict_reviews
BEGIN SELECT RAISE(ABORT, 'conflict_reviews is append-only'); END;
CREATE TRIGGER conflict_reviews_no_delete BEFORE DELETE ON conflict_reviews
BEGIN SELECT RAISE(ABORT, 'conflict_reviews is append-only'); END;
CREATE TRIGGER conflict_reviews_no_replace BEFORE INSERT ON conflict_reviews
WHEN EXISTS (SELECT 1 FROM conflict_reviews WHERE conflict_id = NEW.conflict_id)
BEGIN SELECT RAISE(ABORT, 'conflict_reviews is append-only: a row is never replaced'); END;

CREATE TRIGGER fenced_reviews_no_update BEFORE UPDATE ON fenced_reviews
BEGIN SELECT RAISE(ABORT, 'fenced_reviews is append-only'); END;
CREATE TRIGGER fenced_reviews_no_delete BEFORE DELETE ON fenced_reviews
BEGIN SELECT RAISE(ABORT, 'fenced_reviews is append-only'); END;
CREATE TRIGGER fenced_reviews_no_replace BEFORE INSERT ON fenced_reviews
WHEN EXISTS (SELECT 1 FROM fenced_reviews WHERE fenced_id = NEW.fenced_id)
BEGIN SELECT RAISE(ABORT, 'fenced_reviews is append-only: a row is never replaced'); END;

CREATE TRIGGER ledger_meta_no_update BEFORE UPDATE ON ledger_meta
BEGIN SELECT RAISE(ABORT, 'ledger_meta is append-only'); END;
CREATE TRIGGER ledger_meta_no_delete BEFORE DELETE ON ledger_meta
BEGIN SELECT RAISE(ABORT, 'ledger_meta is append-only'); END;
CREATE TRIGGER ledger_meta_no_replace BEFORE INSERT ON ledger_meta
WHEN EXISTS (SELECT 1 FROM ledger_meta)
BEGIN SELECT RAISE(ABORT, 'ledger_meta is append-only: a row is never replaced'); END;

CREATE TRIGGER report_refusals_no_update BEFORE UPDATE ON report_refusals
BEGIN SELECT RAISE(ABORT, 'report_refusals is append-only'); END;
CREATE TRIGGER report_refusals_no_delete BEFORE DELETE ON report_refusals
BEGIN SELECT RAISE(ABORT, 'report_refusals is append-only'); END;
CREATE TRIGGER report_refusals_no_replace BEFORE INSERT ON report_refusals
WHEN EXISTS (SELECT 1 FROM report_refusals WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'report_refusals is append-only: a row is never replaced'); END;

CREATE TRIGGER operators_no_update BEFORE UPDATE ON operators
BEGIN SELECT RAISE(ABORT, 'operators is append-only'); END;
CREATE TRIGGER operators_no_delete BEFORE DELETE ON operators
BEGIN SELECT RAISE(ABORT, 'operators is append-only'); END;
CREATE TRIGGER operators_no_replace BEFORE INSERT ON operators
WHEN EXISTS (SELECT 1 FROM operators WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'operators is append-only: a row is never replaced'); END;

CREATE TRIGGER signatures_no_update BEFORE UPDATE ON signatures
BEGIN SELECT RAISE(ABORT, 'signatures is append-only'); END;
CREATE TRIGGER signatures_no_delete BEFORE DELETE ON signatures
BEGIN SELECT RAISE(ABORT, 'signatures is append-only'); END;
CREATE TRIGGER signatures_no_replace BEFORE INSERT ON signatures
WHEN EXISTS (SELECT 1 FROM signatures WHERE id = NEW.id OR (fact_table = NEW.fact_table AND fact_row = NEW.fact_row))
BEGIN SELECT RAISE(ABORT, 'signatures is append-only: a row is never replaced'); END;

CREATE TRIGGER votes_no_update BEFORE UPDATE ON votes
BEGIN SELECT RAISE(ABORT, 'votes is append-only'); END;
CREATE TRIGGER votes_no_delete BEFORE DELETE ON votes
BEGIN SELECT RAISE(ABORT, 'votes is append-only'); END;
CREATE TRIGGER votes_no_replace BEFORE INSERT ON votes
WHEN EXISTS (SELECT 1 FROM votes WHERE id = NEW.id OR (action_key = NEW.action_key AND name_key = NEW.name_key))
BEGIN SELECT RAISE(ABORT, 'votes is append-only: a row is never replaced'); END;

CREATE TRIGGER archives_no_update BEFORE UPDATE ON archives
BEGIN SELECT RAISE(ABORT, 'archives is append-only'); END;
CREATE TRIGGER archives_no_delete BEFORE DELETE ON archives
BEGIN SELECT RAISE(ABORT, 'archives is append-only'); END;
CREATE TRIGGER archives_no_replace BEFORE INSERT ON archives
WHEN EXISTS (SELECT 1 FROM archives WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'archives is append-only: a row is never replaced'); END;

CREATE TRIGGER pruned_events_no_update BEFORE UPDATE ON pruned_events
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only'); END;
CREATE TRIGGER pruned_events_no_delete BEFORE DELETE ON pruned_events
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only'); END;
CREATE TRIGGER pruned_events_no_replace BEFORE INSERT ON pruned_events
WHEN EXISTS (SELECT 1 FROM pruned_events WHERE first_seq = NEW.first_seq OR last_seq = NEW.last_seq)
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only: a row is never replaced'); END;

CREATE TRIGGER payloads_no_update BEFORE UPDATE ON payloads
BEGIN SELECT RAISE(ABORT, 'payloads is append-only'); END;
CREATE TRIGGER payloads_no_delete BEFORE DELETE ON payloads
BEGIN SELECT RAISE(ABORT, 'payloads is append-only'); END;
CREATE TRIGGER payloads_no_replace BEFORE INSERT ON payloads
WHEN EXISTS (SELECT 1 FROM payloads WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'payloads is append-only: a row is never replaced'); END;

CREATE TRIGGER policy_evals_no_update BEFORE UPDATE ON policy_evals
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only'); END;
CREATE TRIGGER policy_evals_no_delete BEFORE DELETE ON policy_evals
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only'); END;
CREATE TRIGGER policy_evals_no_replace BEFORE INSERT ON policy_evals
WHEN EXISTS (SELECT 1 FROM policy_evals WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only: a row is never replaced'); END;

CREATE TRIGGER permits_no_update BEFORE UPDATE ON permits
BEGIN SELECT RAISE(ABORT, 'permits is append-only'); END;
CREATE TRIGGER permits_no_delete BEFORE DELETE ON permits
BEGIN SELECT RAISE(ABORT, 'permits is append-only'); END;
CREATE TRIGGER permits_no_replace BEFORE INSERT ON permits
WHEN EXISTS (SELECT 1 FROM permits WHERE action_key = NEW.action_key OR permit_id = NEW.permit_id)
BEGIN SELECT RAISE(ABORT, 'permits is append-only: a row is never replaced'); END;

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;
CREATE TRIGGER events_no_replace BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq)
BEGIN SELECT RAISE(ABORT, 'events is append-only: a row is never replaced'); END;

CREATE TRIGGER archived_stubs_no_update BEFORE UPDATE ON archived_stubs
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;
CREATE TRIGGER archived_stubs_no_delete BEFORE DELETE ON archived_stubs
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;
CREATE TRIGGER archived_stubs_no_replace BEFORE INSERT ON archived_stubs
WHEN EXISTS (SELECT 1 FROM archived_stubs WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only: a row is never replaced'); END;

CREATE TRIGGER set_aside_no_update BEFORE UPDATE ON set_aside
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only'); END;
CREATE TRIGGER set_aside_no_delete BEFORE DELETE ON set_aside
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only'); END;
CREATE TRIGGER set_aside_no_replace BEFORE INSERT ON set_aside
WHEN EXISTS (SELECT 1 FROM set_aside WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only: a row is never replaced'); END;

CREATE TRIGGER agent_tokens_no_update BEFORE UPDATE ON agent_tokens
BEGIN SELECT RAISE(ABORT, 'agent_tokens is append-only'); END;
CREATE TRIGGER agent_tokens_no_delete BEFORE DELETE ON agent_tokens
BEGIN SELECT RAISE(ABORT, 'agent_tokens is append-only'); END;
CREATE TRIGGER agent_tokens_no_replace BEFORE INSERT ON agent_tokens
WHEN EXISTS (SELECT 1 FROM agent_tokens WHERE id = NEW.id OR (token_id = NEW.token_id AND action = NEW.action))
BEGIN SELECT RAISE(ABORT, 'agent_tokens is append-only: a row is never replaced'); END;

CREATE TRIGGER principal_names_no_update BEFORE UPDATE ON principal_names
BEGIN SELECT RAISE(ABORT, 'principal_names is append-only'); END;
CREATE TRIGGER principal_names_no_delete BEFORE DELETE ON principal_names
BEGIN SELECT RAISE(ABORT, 'principal_names is append-only'); END;
CREATE TRIGGER principal_names_no_replace BEFORE INSERT ON principal_names
WHEN EXISTS (SELECT 1 FROM principal_names WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'principal_names is append-only: a row is never replaced'); END;

CREATE TRIGGER permit_attempts_no_update BEFORE UPDATE ON permit_attempts
BEGIN SELECT RAISE(ABORT, 'permit_attempts is append-only'); END;
CREATE TRIGGER permit_attempts_no_delete BEFORE DELETE ON permit_attempts
BEGIN SELECT RAISE(ABORT, 'permit_attempts is append-only'); END;
CREATE TRIGGER permit_attempts_no_replace BEFORE INSERT ON permit_attempts
WHEN EXISTS (SELECT 1 FROM permit_attempts WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'permit_attempts is append-only: a row is never replaced'); END;

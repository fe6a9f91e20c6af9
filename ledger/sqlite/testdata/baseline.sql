-- A new ledger at the baseline schema, as SQLite stores it: generated
-- by TestBaselineSnapshot -update, frozen once a migration is on top of it.
CREATE TABLE intents (
    action_key TEXT PRIMARY KEY, payload_sha256 TEXT NOT NULL,
    status TEXT NOT NULL CHECK(status = 'recorded'));
CREATE TABLE conflicts (
    id               INTEGER PRIMARY KEY,
    action_key       TEXT NOT NULL REFERENCES intents(action_key),
    stored_sha256    TEXT NOT NULL CHECK(length(stored_sha256) = 64),
    attempted_sha256 TEXT NOT NULL CHECK(length(attempted_sha256) = 64 AND attempted_sha256 NOT GLOB '*[^0-9a-f]*'),
    attempted        TEXT,
    redacted         INTEGER NOT NULL CHECK(redacted IN (0, 1)),
    differs          TEXT NOT NULL,
    agent            TEXT NOT NULL,
    at_ms            INTEGER NOT NULL
) STRICT;
CREATE TABLE policy_rules (
    id          INTEGER PRIMARY KEY,
    pattern     TEXT NOT NULL CHECK(length(pattern) BETWEEN 1 AND 200),
    mode        TEXT NOT NULL CHECK(mode IN ('auto', 'approval', 'deny')),
    ttl_ms      INTEGER NOT NULL CHECK(ttl_ms >= 0),
    operator    TEXT NOT NULL,
    set_ms      INTEGER NOT NULL,
    -- The quorum of distinct operators' approvals the rule asks for.
    approvers   INTEGER NOT NULL DEFAULT 1 CHECK(approvers BETWEEN 1 AND 9),
    -- A CEL expression over the action and its context (SPEC 10).
    condition   TEXT NOT NULL DEFAULT '' CHECK(length(condition) <= 2000),
    priority    INTEGER NOT NULL DEFAULT 0 CHECK(priority BETWEEN -1000 AND 1000)
) STRICT;
CREATE TABLE approval_requests (
    action_key    TEXT PRIMARY KEY REFERENCES intents(action_key),
    agent         TEXT NOT NULL,
    requested_ms  INTEGER NOT NULL,
    expires_ms    INTEGER NOT NULL CHECK(expires_ms > requested_ms)
) STRICT;
CREATE TABLE decisions (
    action_key  TEXT PRIMARY KEY REFERENCES approval_requests(action_key),
    decision    TEXT NOT NULL CHECK(decision IN ('approved', 'rejected')),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    reason      TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    CHECK(decision = 'approved' OR length(reason) > 0)
) STRICT;
CREATE TABLE reports (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL REFERENCES permits(action_key),
    permit_id   TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK(outcome IN ('succeeded', 'failed', 'unknown')),
    ref         TEXT NOT NULL,
    latency_ms  INTEGER NOT NULL CHECK(latency_ms >= 0),
    kind        TEXT NOT NULL CHECK(kind IN ('accepted', 'late', 'refused')),
    at_ms       INTEGER NOT NULL,
    result      TEXT NOT NULL DEFAULT '' CHECK(length(result) <= 65536)
) STRICT;
CREATE TABLE reconciliations (
    action_key  TEXT PRIMARY KEY REFERENCES permits(action_key),
    result      TEXT NOT NULL CHECK(result IN ('executed', 'not-executed')),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    note        TEXT NOT NULL CHECK(length(note) > 0),
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE epochs (
    seq         INTEGER PRIMARY KEY,
    epoch       TEXT NOT NULL UNIQUE CHECK(length(epoch) = 36),
    operator    TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE fenced (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL,
    key_epoch   TEXT NOT NULL,
    active_epoch TEXT NOT NULL,
    payload_sha256 TEXT NOT NULL CHECK(length(payload_sha256) = 64),
    agent       TEXT NOT NULL,
    reason      TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE conflict_reviews (
    conflict_id INTEGER PRIMARY KEY REFERENCES conflicts(id),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    note        TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE fenced_reviews (
    fenced_id   INTEGER PRIMARY KEY REFERENCES fenced(id),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    note        TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE ledger_meta (
    one        INTEGER PRIMARY KEY CHECK(one = 1),
    ledger_id  TEXT NOT NULL CHECK(length(ledger_id) = 36),
    created_ms INTEGER NOT NULL
) STRICT;
CREATE TABLE report_refusals (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL,
    permit_id   TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    ref         TEXT NOT NULL,
    latency_ms  INTEGER NOT NULL,
    rule        TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE operators (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL CHECK(length(name) BETWEEN 1 AND 200),
    name_key    TEXT NOT NULL CHECK(length(name_key) > 0),
    action      TEXT NOT NULL CHECK(action IN ('add', 'remove')),
    public_key  TEXT NOT NULL,
    fingerprint TEXT NOT NULL CHECK(fingerprint LIKE 'SHA256:%'),
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE signatures (
    id          INTEGER PRIMARY KEY,
    fact_table  TEXT NOT NULL,
    fact_row    TEXT NOT NULL,
    fingerprint TEXT NOT NULL CHECK(fingerprint LIKE 'SHA256:%'),
    signed_ms   INTEGER NOT NULL,
    signature   BLOB NOT NULL,
    at_ms       INTEGER NOT NULL,
    UNIQUE(fact_table, fact_row)
) STRICT;
CREATE TABLE votes (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL REFERENCES approval_requests(action_key),
    decision    TEXT NOT NULL CHECK(decision IN ('approved', 'rejected')),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    name_key    TEXT NOT NULL CHECK(length(name_key) > 0),
    reason      TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    UNIQUE(action_key, name_key),
    CHECK(decision = 'approved' OR length(reason) > 0)
) STRICT;
CREATE TABLE chain_head (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    seq  INTEGER NOT NULL CHECK (seq >= 0),
    hash TEXT NOT NULL CHECK (length(hash) = 64)
) STRICT;
CREATE TABLE archives (
    id               INTEGER PRIMARY KEY,
    file             TEXT NOT NULL CHECK(length(file) BETWEEN 1 AND 4096),
    ledger_id        TEXT NOT NULL,
    through_seq      INTEGER NOT NULL CHECK(through_seq >= 0),
    through_hash     TEXT NOT NULL CHECK(length(through_hash) = 64 AND through_hash NOT GLOB '*[^0-9a-f]*'),
    head_seq         INTEGER NOT NULL,
    head_hash        TEXT NOT NULL CHECK(length(head_hash) = 64 AND head_hash NOT GLOB '*[^0-9a-f]*'),
    keys             INTEGER NOT NULL CHECK(keys >= 0),
    keys_sha256      TEXT NOT NULL CHECK(length(keys_sha256) = 64 AND keys_sha256 NOT GLOB '*[^0-9a-f]*'),
    spans            INTEGER NOT NULL CHECK(spans >= 0),
    spans_sha256     TEXT NOT NULL CHECK(length(spans_sha256) = 64 AND spans_sha256 NOT GLOB '*[^0-9a-f]*'),
    settled_before_ms INTEGER NOT NULL,
    operator         TEXT NOT NULL,
    at_ms            INTEGER NOT NULL
) STRICT;
CREATE TABLE pruned_events (
    first_seq  INTEGER PRIMARY KEY,
    last_seq   INTEGER NOT NULL UNIQUE CHECK(last_seq >= first_seq),
    first_prev TEXT NOT NULL CHECK(length(first_prev) = 64 AND first_prev NOT GLOB '*[^0-9a-f]*'),
    last_hash  TEXT NOT NULL CHECK(length(last_hash) = 64 AND last_hash NOT GLOB '*[^0-9a-f]*'),
    archive_id INTEGER NOT NULL
) STRICT;
CREATE TABLE action_index (
    id          INTEGER NOT NULL UNIQUE,
    action_key  TEXT NOT NULL PRIMARY KEY,
    logical_key TEXT NOT NULL,
    epoch       TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL DEFAULT '',
    agent       TEXT NOT NULL DEFAULT '',
    stage       TEXT NOT NULL DEFAULT 'recorded' CHECK(stage IN ('recorded','pending','approved','denied','rejected','executing','uncertain','succeeded','failed','reconciled')),
    deadline_ms INTEGER NOT NULL DEFAULT 0,
    updated_ms  INTEGER NOT NULL DEFAULT 0,
    -- Copies of the intent's facts, so that a retry is answered by one
    -- lookup (verify checks that they agree with the facts).
    payload_sha256 TEXT NOT NULL,
    retained    INTEGER NOT NULL DEFAULT 0,
    redacted    INTEGER NOT NULL DEFAULT 0,
    -- The console's filter matches the target too. Redacted payloads keep
    -- no target, so theirs stays empty; intents recorded outside tollgate
    -- have none.
    target      TEXT NOT NULL DEFAULT '',
    context_sha256 TEXT NOT NULL DEFAULT '',
    -- An identical retry's answer as one value (fastCols in state.go, the
    -- same expression), kept with the row: one search, one column.
    answer      TEXT NOT NULL GENERATED ALWAYS AS (payload_sha256 || stage || ' ' || deadline_ms || ' ' || (retained + 2 * redacted) || context_sha256 || ' ' || agent) STORED
) STRICT, WITHOUT ROWID;
CREATE TABLE payloads (
    action_key     TEXT NOT NULL PRIMARY KEY REFERENCES intents(action_key),
    payload_sha256 TEXT NOT NULL CHECK(length(payload_sha256) = 64 AND payload_sha256 NOT GLOB '*[^0-9a-f]*'),
    canonical      TEXT CHECK(canonical IS NULL OR length(canonical) >= 30),
    redacted       INTEGER NOT NULL CHECK(redacted IN (0, 1)),
    kind           TEXT NOT NULL,
    kind_sha256    TEXT NOT NULL CHECK(length(kind_sha256) = 64),
    target_sha256  TEXT NOT NULL CHECK(length(target_sha256) = 64),
    body_sha256    TEXT NOT NULL CHECK(length(body_sha256) = 64),
    agent          TEXT NOT NULL,
    recorded_ms    INTEGER NOT NULL,
    -- The context the intent was guarded with, bound to its key by its
    -- own digest (which the answer carries, so that a changed context is
    -- a conflict).
    context_sha256 TEXT NOT NULL DEFAULT ''
        CHECK(context_sha256 = '' OR (length(context_sha256) = 64 AND context_sha256 NOT GLOB '*[^0-9a-f]*')),
    context        TEXT NOT NULL DEFAULT '' CHECK(length(context) <= 8192),
    CHECK((redacted = 1) = (canonical IS NULL))
) STRICT, WITHOUT ROWID;
CREATE TABLE policy_evals (
    action_key  TEXT NOT NULL PRIMARY KEY REFERENCES intents(action_key),
    mode        TEXT NOT NULL CHECK(mode IN ('auto', 'approval', 'deny')),
    ttl_ms      INTEGER NOT NULL,
    rule_id     INTEGER REFERENCES policy_rules(id),
    pattern     TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    approvers   INTEGER NOT NULL DEFAULT 1 CHECK(approvers BETWEEN 1 AND 9),
    explain     TEXT NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID;
CREATE TABLE permits (
    action_key  TEXT NOT NULL PRIMARY KEY REFERENCES intents(action_key),
    permit_id   TEXT NOT NULL UNIQUE CHECK(length(permit_id) = 36),
    agent       TEXT NOT NULL,
    issued_ms   INTEGER NOT NULL,
    lease_ms    INTEGER NOT NULL CHECK(lease_ms > issued_ms)
) STRICT, WITHOUT ROWID;
CREATE TABLE events (
    seq        INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL,
    type       TEXT NOT NULL,
    actor      TEXT NOT NULL,
    detail     TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    prev_hash  TEXT NOT NULL CHECK(length(prev_hash) = 64 AND prev_hash NOT GLOB '*[^0-9a-f]*'),
    hash       TEXT NOT NULL CHECK(length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
    fact_table TEXT NOT NULL DEFAULT '',
    fact_row   TEXT NOT NULL DEFAULT '',
    fact_sha256 TEXT NOT NULL DEFAULT '',
    hv         INTEGER NOT NULL DEFAULT 1 CHECK(hv IN (1, 2))
) STRICT;
CREATE TABLE archived_stubs (
    action_key     TEXT PRIMARY KEY,
    archive_id     INTEGER NOT NULL,
    -- denied, rejected, expired, succeeded, failed, reconciled
    state          INTEGER NOT NULL CHECK(state BETWEEN 0 AND 5),
    -- '', executed, not-executed
    result         INTEGER NOT NULL DEFAULT 0 CHECK(result BETWEEN 0 AND 2),
    context_sha256 TEXT NOT NULL DEFAULT ''
        CHECK(context_sha256 = '' OR (length(context_sha256) = 64 AND context_sha256 NOT GLOB '*[^0-9a-f]*'))
) STRICT, WITHOUT ROWID;
CREATE TABLE set_aside (
    id         INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL,
    fact_table TEXT NOT NULL CHECK(fact_table IN ('decisions', 'votes')),
    row_json   TEXT NOT NULL CHECK(length(row_json) <= 20000),
    operator   TEXT NOT NULL,
    at_ms      INTEGER NOT NULL
) STRICT;
CREATE TABLE agent_tokens (
    id        INTEGER PRIMARY KEY,
    token_id  TEXT NOT NULL CHECK(length(token_id) = 16 AND token_id NOT GLOB '*[^0-9a-f]*'),
    action    TEXT NOT NULL CHECK(action IN ('create', 'revoke')),
    name      TEXT NOT NULL CHECK(length(name) BETWEEN 1 AND 200),
    name_key  TEXT NOT NULL CHECK(length(name_key) > 0),
    scope     TEXT NOT NULL CHECK(scope IN ('agent', 'operator')),
    digest    TEXT NOT NULL CHECK((action = 'create' AND length(digest) = 64 AND digest NOT GLOB '*[^0-9a-f]*') OR (action = 'revoke' AND digest = '')),
    operator  TEXT NOT NULL CHECK(length(operator) > 0),
    at_ms     INTEGER NOT NULL,
    UNIQUE(token_id, action)
) STRICT;
CREATE TABLE principal_names (
    id        INTEGER PRIMARY KEY,
    who       TEXT NOT NULL CHECK(length(who) BETWEEN 1 AND 200),
    who_key   TEXT NOT NULL CHECK(length(who_key) > 0),
    agent     TEXT NOT NULL CHECK(length(agent) BETWEEN 1 AND 200),
    agent_key TEXT NOT NULL CHECK(length(agent_key) > 0),
    action    TEXT NOT NULL CHECK(action IN ('allow', 'revoke')),
    operator  TEXT NOT NULL CHECK(length(operator) > 0),
    at_ms     INTEGER NOT NULL
) STRICT;
CREATE TABLE permit_attempts (
    action_key     TEXT PRIMARY KEY,
    permit_id      TEXT NOT NULL,
    agent          TEXT NOT NULL,
    attempt_sha256 TEXT NOT NULL CHECK(length(attempt_sha256) = 64 AND attempt_sha256 NOT GLOB '*[^0-9a-f]*'),
    at_ms          INTEGER NOT NULL
) STRICT;
INSERT INTO "chain_head"(one, seq, hash) VALUES(1,0,'0000000000000000000000000000000000000000000000000000000000000000');
CREATE INDEX conflicts_key ON conflicts(action_key);
CREATE INDEX policy_rules_pattern ON policy_rules(pattern, id);
CREATE UNIQUE INDEX reports_one_accepted ON reports(action_key) WHERE kind = 'accepted';
CREATE INDEX reports_key ON reports(action_key, id);
CREATE INDEX fenced_key ON fenced(action_key);
CREATE INDEX report_refusals_key ON report_refusals(action_key, id);
CREATE UNIQUE INDEX signatures_once ON signatures(signature);
CREATE INDEX action_index_open ON action_index(stage, deadline_ms)
    WHERE stage IN ('pending', 'approved', 'executing', 'uncertain');
CREATE INDEX events_key ON events(action_key, seq);
CREATE INDEX events_fact ON events(fact_table, fact_row);
CREATE INDEX set_aside_key ON set_aside(action_key, id);
CREATE INDEX principal_names_pair ON principal_names(who_key, agent_key, id);
CREATE VIEW archived_keys(action_key, archive_id, state, result, context_sha256) AS
SELECT action_key, archive_id,
    CASE state WHEN 0 THEN 'denied' WHEN 1 THEN 'rejected' WHEN 2 THEN 'expired'
               WHEN 3 THEN 'succeeded' WHEN 4 THEN 'failed' WHEN 5 THEN 'reconciled' END,
    CASE result WHEN 0 THEN '' WHEN 1 THEN 'executed' WHEN 2 THEN 'not-executed' END,
    context_sha256
FROM archived_stubs;
CREATE TRIGGER intents_hash_shape BEFORE INSERT ON intents
WHEN length(NEW.payload_sha256) != 64 OR NEW.payload_sha256 GLOB '*[^0-9a-f]*'
BEGIN SELECT RAISE(ABORT, 'intents.payload_sha256 must be 64 lowercase hex digits'); END;
CREATE TRIGGER intents_no_update BEFORE UPDATE ON intents
BEGIN SELECT RAISE(ABORT, 'intents is append-only'); END;
CREATE TRIGGER intents_no_delete BEFORE DELETE ON intents
BEGIN SELECT RAISE(ABORT, 'intents is append-only'); END;
CREATE TRIGGER intents_index AFTER INSERT ON intents
BEGIN
    SELECT RAISE(ABORT, 'intents is append-only: a key is never replaced')
    WHERE EXISTS (SELECT 1 FROM action_index WHERE action_key = NEW.action_key)
       OR EXISTS (SELECT 1 FROM archived_keys WHERE action_key = NEW.action_key);
    INSERT INTO action_index(id, action_key, logical_key, payload_sha256)
        VALUES ((SELECT coalesce(max(id), 0) + 1 FROM action_index), NEW.action_key, NEW.action_key, NEW.payload_sha256);
END;
CREATE TRIGGER action_index_no_delete BEFORE DELETE ON action_index
BEGIN SELECT RAISE(ABORT, 'action_index rows are never deleted'); END;
CREATE TRIGGER action_index_no_replace BEFORE INSERT ON action_index
WHEN EXISTS (SELECT 1 FROM action_index WHERE id = NEW.id OR action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'action_index rows are never replaced'); END;
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
CREATE TRIGGER reports_no_replace_accepted BEFORE INSERT ON reports
WHEN NEW.kind = 'accepted' AND EXISTS (SELECT 1 FROM reports WHERE action_key = NEW.action_key AND kind = 'accepted')
BEGIN SELECT RAISE(ABORT, 'reports is append-only: an accepted report is never replaced'); END;
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

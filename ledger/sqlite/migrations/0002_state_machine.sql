-- The state machine's facts: policy rules and evaluations, approval
-- requests and decisions, permits, reports, reconciliations, epochs,
-- fenced attempts and conflict reviews. Each step is its own row.

CREATE TABLE policy_rules (
    id          INTEGER PRIMARY KEY,
    pattern     TEXT NOT NULL CHECK(length(pattern) BETWEEN 1 AND 200),
    mode        TEXT NOT NULL CHECK(mode IN ('auto', 'approval', 'deny')),
    ttl_ms      INTEGER NOT NULL CHECK(ttl_ms >= 0),
    operator    TEXT NOT NULL,
    set_ms      INTEGER NOT NULL
) STRICT;
CREATE INDEX policy_rules_pattern ON policy_rules(pattern, id);

CREATE TABLE policy_evals (
    action_key  TEXT PRIMARY KEY REFERENCES intents(action_key),
    mode        TEXT NOT NULL CHECK(mode IN ('auto', 'approval', 'deny')),
    ttl_ms      INTEGER NOT NULL,
    rule_id     INTEGER REFERENCES policy_rules(id),
    pattern     TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
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

CREATE TABLE permits (
    action_key  TEXT PRIMARY KEY REFERENCES intents(action_key),
    permit_id   TEXT NOT NULL UNIQUE CHECK(length(permit_id) = 36),
    agent       TEXT NOT NULL,
    issued_ms   INTEGER NOT NULL,
    lease_ms    INTEGER NOT NULL CHECK(lease_ms > issued_ms)
) STRICT;

-- kind: accepted (the final report), late (after the lease ran out or after
-- reconciliation: evidence only), refused (differs from the accepted one).
CREATE TABLE reports (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL REFERENCES permits(action_key),
    permit_id   TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK(outcome IN ('succeeded', 'failed', 'unknown')),
    ref         TEXT NOT NULL,
    latency_ms  INTEGER NOT NULL CHECK(latency_ms >= 0),
    kind        TEXT NOT NULL CHECK(kind IN ('accepted', 'late', 'refused')),
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX reports_one_accepted ON reports(action_key) WHERE kind = 'accepted';
CREATE INDEX reports_key ON reports(action_key, id);

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
CREATE INDEX fenced_key ON fenced(action_key);

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
CREATE TRIGGER policy_rules_no_update BEFORE UPDATE ON policy_rules
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only'); END;
CREATE TRIGGER policy_rules_no_delete BEFORE DELETE ON policy_rules
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only'); END;
CREATE TRIGGER policy_evals_no_update BEFORE UPDATE ON policy_evals
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only'); END;
CREATE TRIGGER policy_evals_no_delete BEFORE DELETE ON policy_evals
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only'); END;
CREATE TRIGGER approval_requests_no_update BEFORE UPDATE ON approval_requests
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only'); END;
CREATE TRIGGER approval_requests_no_delete BEFORE DELETE ON approval_requests
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only'); END;
CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions is append-only'); END;
CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions is append-only'); END;
CREATE TRIGGER permits_no_update BEFORE UPDATE ON permits
BEGIN SELECT RAISE(ABORT, 'permits is append-only'); END;
CREATE TRIGGER permits_no_delete BEFORE DELETE ON permits
BEGIN SELECT RAISE(ABORT, 'permits is append-only'); END;
CREATE TRIGGER reports_no_update BEFORE UPDATE ON reports
BEGIN SELECT RAISE(ABORT, 'reports is append-only'); END;
CREATE TRIGGER reports_no_delete BEFORE DELETE ON reports
BEGIN SELECT RAISE(ABORT, 'reports is append-only'); END;
CREATE TRIGGER reconciliations_no_update BEFORE UPDATE ON reconciliations
BEGIN SELECT RAISE(ABORT, 'reconciliations is append-only'); END;
CREATE TRIGGER reconciliations_no_delete BEFORE DELETE ON reconciliations
BEGIN SELECT RAISE(ABORT, 'reconciliations is append-only'); END;
CREATE TRIGGER epochs_no_update BEFORE UPDATE ON epochs
BEGIN SELECT RAISE(ABORT, 'epochs is append-only'); END;
CREATE TRIGGER epochs_no_delete BEFORE DELETE ON epochs
BEGIN SELECT RAISE(ABORT, 'epochs is append-only'); END;
CREATE TRIGGER fenced_no_update BEFORE UPDATE ON fenced
BEGIN SELECT RAISE(ABORT, 'fenced is append-only'); END;
CREATE TRIGGER fenced_no_delete BEFORE DELETE ON fenced
BEGIN SELECT RAISE(ABORT, 'fenced is append-only'); END;
CREATE TRIGGER conflict_reviews_no_update BEFORE UPDATE ON conflict_reviews
BEGIN SELECT RAISE(ABORT, 'conflict_reviews is append-only'); END;
CREATE TRIGGER conflict_reviews_no_delete BEFORE DELETE ON conflict_reviews
BEGIN SELECT RAISE(ABORT, 'conflict_reviews is append-only'); END;
CREATE TRIGGER fenced_reviews_no_update BEFORE UPDATE ON fenced_reviews
BEGIN SELECT RAISE(ABORT, 'fenced_reviews is append-only'); END;
CREATE TRIGGER fenced_reviews_no_delete BEFORE DELETE ON fenced_reviews
BEGIN SELECT RAISE(ABORT, 'fenced_reviews is append-only'); END;

-- Refuse INSERT OR REPLACE, which would delete without firing delete triggers.
CREATE TRIGGER policy_rules_no_replace BEFORE INSERT ON policy_rules
WHEN EXISTS (SELECT 1 FROM policy_rules WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only: a row is never replaced'); END;
CREATE TRIGGER policy_evals_no_replace BEFORE INSERT ON policy_evals
WHEN EXISTS (SELECT 1 FROM policy_evals WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only: a row is never replaced'); END;
CREATE TRIGGER approval_requests_no_replace BEFORE INSERT ON approval_requests
WHEN EXISTS (SELECT 1 FROM approval_requests WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only: a row is never replaced'); END;
CREATE TRIGGER decisions_no_replace BEFORE INSERT ON decisions
WHEN EXISTS (SELECT 1 FROM decisions WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'decisions is append-only: a row is never replaced'); END;
CREATE TRIGGER permits_no_replace BEFORE INSERT ON permits
WHEN EXISTS (SELECT 1 FROM permits WHERE action_key = NEW.action_key OR permit_id = NEW.permit_id)
BEGIN SELECT RAISE(ABORT, 'permits is append-only: a row is never replaced'); END;
CREATE TRIGGER reports_no_replace BEFORE INSERT ON reports
WHEN EXISTS (SELECT 1 FROM reports WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'reports is append-only: a row is never replaced'); END;
CREATE TRIGGER reconciliations_no_replace BEFORE INSERT ON reconciliations
WHEN EXISTS (SELECT 1 FROM reconciliations WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'reconciliations is append-only: a row is never replaced'); END;
CREATE TRIGGER epochs_no_replace BEFORE INSERT ON epochs
WHEN EXISTS (SELECT 1 FROM epochs WHERE seq = NEW.seq OR epoch = NEW.epoch)
BEGIN SELECT RAISE(ABORT, 'epochs is append-only: a row is never replaced'); END;
CREATE TRIGGER fenced_no_replace BEFORE INSERT ON fenced
WHEN EXISTS (SELECT 1 FROM fenced WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'fenced is append-only: a row is never replaced'); END;
CREATE TRIGGER conflict_reviews_no_replace BEFORE INSERT ON conflict_reviews
WHEN EXISTS (SELECT 1 FROM conflict_reviews WHERE conflict_id = NEW.conflict_id)
BEGIN SELECT RAISE(ABORT, 'conflict_reviews is append-only: a row is never replaced'); END;
CREATE TRIGGER fenced_reviews_no_replace BEFORE INSERT ON fenced_reviews
WHEN EXISTS (SELECT 1 FROM fenced_reviews WHERE fenced_id = NEW.fenced_id)
BEGIN SELECT RAISE(ABORT, 'fenced_reviews is append-only: a row is never replaced'); END;

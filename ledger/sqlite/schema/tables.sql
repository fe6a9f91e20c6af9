-- tollgate's SQLite ledger: every table, its index and view, defined once.
-- A new ledger is made from this file and triggers.sql, in that order, in
-- one transaction (schema.go); the append-only and fact-check triggers
-- are in triggers.sql. A change to the schema edits this file (or
-- triggers.sql) and adds a numbered migration on top of the baseline in
-- ../migrations (see its README.md); TestForwardMigrationsMakeTheSchema
-- checks that the two agree.
--
-- Every table but action_index is evidence: rows are appended, never
-- updated or deleted (triggers.sql). Each fact row is committed by the
-- event that records it: the event carries the row's table, key and the
-- SHA-256 of its columns, all covered by the event's hash (hash version
-- 2), so verify proves each fact row by its event and each event by its
-- row. Where a column was added after rows existed, the row hash covers
-- it only where it differs from its default, so older rows stay proven.
--
-- CREATE TABLE statements are stored by SQLite as written: comments that
-- explain a column sit inside the statement, next to it.

-- Exactly the seed fixture's table, so that its record_intent() and
-- tollgate share one ledger (seed interoperability: its shape never
-- changes, and its hash shape is held by a trigger). IF NOT EXISTS: a
-- file the fixture made keeps its rows and becomes a ledger around them.
CREATE TABLE IF NOT EXISTS intents (
    action_key TEXT PRIMARY KEY, payload_sha256 TEXT NOT NULL,
    status TEXT NOT NULL CHECK(status = 'recorded'));

-- Every attempt to bind a recorded key to a different payload.
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
CREATE INDEX conflicts_key ON conflicts(action_key);

-- A policy rule: a rule is its pattern and condition (setting the pair
-- again replaces it; the newest row wins).
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
CREATE INDEX policy_rules_pattern ON policy_rules(pattern, id);

CREATE TABLE approval_requests (
    action_key    TEXT PRIMARY KEY REFERENCES intents(action_key),
    agent         TEXT NOT NULL,
    requested_ms  INTEGER NOT NULL,
    expires_ms    INTEGER NOT NULL CHECK(expires_ms > requested_ms)
) STRICT;

-- A request's outcome, written when the quorum is reached or at the
-- first rejection (votes holds each operator's decision).
CREATE TABLE decisions (
    action_key  TEXT PRIMARY KEY REFERENCES approval_requests(action_key),
    decision    TEXT NOT NULL CHECK(decision IN ('approved', 'rejected')),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    reason      TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    CHECK(decision = 'approved' OR length(reason) > 0)
) STRICT;

-- kind: accepted (the final report), late (after the lease ran out or
-- after reconciliation: evidence only), refused (differs from the
-- accepted one). result is what the action returned (bounded), so that
-- a caller that lost the first answer can be given it again (the MCP
-- proxy's replay).
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

-- A guard of a key of an epoch that is not the active one: refused, and
-- kept as evidence.
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

-- The ledger's identity, fixed at creation: a random id that the witness
-- file and exports name. One row, never changed.
CREATE TABLE ledger_meta (
    one        INTEGER PRIMARY KEY CHECK(one = 1),
    ledger_id  TEXT NOT NULL CHECK(length(ledger_id) = 36),
    created_ms INTEGER NOT NULL
) STRICT;

-- A report refused before it could be filed as a report of the key's
-- permit (no permit, another key's permit id, a wrong id): kept as
-- evidence all the same. No foreign key: the key may have no permit, or
-- not exist at all.
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
CREATE INDEX report_refusals_key ON report_refusals(action_key, id);

-- An operator is a name bound to an Ed25519 public key. The set changes
-- only by appending rows: 'add' registers a key under a name, 'remove'
-- withdraws it. The first registration makes the ledger signed for ever;
-- every later change, and every operator-authored fact after it, carries
-- a row in signatures over a canonical statement (ledger/statement.go).
CREATE TABLE operators (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL CHECK(length(name) BETWEEN 1 AND 200),
    name_key    TEXT NOT NULL CHECK(length(name_key) > 0),
    action      TEXT NOT NULL CHECK(action IN ('add', 'remove')),
    public_key  TEXT NOT NULL,
    fingerprint TEXT NOT NULL CHECK(fingerprint LIKE 'SHA256:%'),
    at_ms       INTEGER NOT NULL
) STRICT;

-- One signature per fact row: the fact's table and row key, the signing
-- key's fingerprint, the time the operator signed, and the SSH signature
-- in wire form. Every signed statement names what makes its fact unique
-- where it stands (the rule it replaces, the epoch or operator change
-- before it), so a signed row copied elsewhere does not verify; and a
-- signature counts once (signatures_once).
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
CREATE UNIQUE INDEX signatures_once ON signatures(signature);

-- One operator's decision on a request. A request needs the quorum its
-- policy evaluation stored (approvers) of distinct operators' approvals;
-- one rejection decides it.
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

-- The chain head as a row: what a transaction locks and advances on an
-- engine with many writers (the state machine is written once for both
-- engines). It only moves forward and is never removed; verify checks it
-- against the last event.
CREATE TABLE chain_head (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    seq  INTEGER NOT NULL CHECK (seq >= 0),
    hash TEXT NOT NULL CHECK (length(hash) = 64)
) STRICT;
INSERT INTO chain_head(one, seq, hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');

-- Retention (SPEC 11). archive moves settled actions, with every fact and
-- event that proves them, into an archive ledger file, and keeps here
-- only what keeps each key's promise: its intents row (the payload digest
-- a retry is compared with), its final state and the archive it went to
-- (archived_stubs). The events it removes leave runs of sequence numbers
-- behind; each run is kept as one pruned_events row naming the hash
-- before it and the hash it ends with, so that the chain still links from
-- the first event to the head. A checkpoint event commits the archives
-- row, which carries digests of the archived keys and of the runs:
-- verify proves both from it, and verify --archive proves the archive
-- file is the one it names.
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

-- One row per run of removed events: first_prev is the prev_hash of its
-- first event, last_hash the hash of its last.
CREATE TABLE pruned_events (
    first_seq  INTEGER PRIMARY KEY,
    last_seq   INTEGER NOT NULL UNIQUE CHECK(last_seq >= first_seq),
    first_prev TEXT NOT NULL CHECK(length(first_prev) = 64 AND first_prev NOT GLOB '*[^0-9a-f]*'),
    last_hash  TEXT NOT NULL CHECK(length(last_hash) = 64 AND last_hash NOT GLOB '*[^0-9a-f]*'),
    archive_id INTEGER NOT NULL
) STRICT;

-- The action index: one row per key with its current stage, so that
-- lists page through an index instead of deriving every key's state. It
-- is a projection of the append-only facts (verify checks it); it may be
-- updated, never deleted. Time-dependent states (expired, uncertain after
-- a lease) are derived from stage + deadline_ms at read time. Keyed by
-- its action key (WITHOUT ROWID): a retry's lookup is one search of the
-- table itself. The list order (id) has its own unique index; the
-- intents trigger numbers a new row after the largest id.
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
-- Secondary indexes serve open work; settled history is read by key, in
-- chain order, or by a scan that shows its progress. This partial index
-- holds the few actions still waiting on someone. A query for open work
-- repeats its WHERE term (openStages in state.go, the same expression) so
-- that SQLite's planner, which matches terms, can use it; a test reads
-- the query plans.
CREATE INDEX action_index_open ON action_index(stage, deadline_ms)
    WHERE stage IN ('pending', 'approved', 'executing', 'uncertain');
-- A file the seed fixture made holds intents and nothing else: each gets
-- its projection row (a new ledger has none).
INSERT INTO action_index(id, action_key, logical_key, payload_sha256)
    SELECT rowid, action_key, action_key, payload_sha256 FROM intents ORDER BY rowid;

-- The retained payload of an intent tollgate recorded, read by key only
-- (WITHOUT ROWID). canonical is NULL when the caller asked for
-- redaction; the per-field digests still let a conflict say which field
-- differs without keeping the text.
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

-- The policy's decision for a key, with what it read (explain).
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

-- A permit, one per key, is read by key or by its id.
CREATE TABLE permits (
    action_key  TEXT NOT NULL PRIMARY KEY REFERENCES intents(action_key),
    permit_id   TEXT NOT NULL UNIQUE CHECK(length(permit_id) = 36),
    agent       TEXT NOT NULL,
    issued_ms   INTEGER NOT NULL,
    lease_ms    INTEGER NOT NULL CHECK(lease_ms > issued_ms)
) STRICT, WITHOUT ROWID;

-- The hash chain: each event's hash covers the previous hash and the
-- event, and (hv 2) the table, key and SHA-256 of the fact row it
-- commits. An event is unique by its seq: verify recomputes every hash
-- from the one before, so a second row with a copied hash is already a
-- broken link, and no unique index on hash is kept.
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
CREATE INDEX events_key ON events(action_key, seq);
CREATE INDEX events_fact ON events(fact_table, fact_row);

-- One stub per archived key, its state and result stored as their
-- positions in the vocabulary (0 and 1 take no bytes in an SQLite
-- record). archive_id names an archives row that commits after it, in
-- the same transaction (no foreign key: the row's digests cover these
-- rows).
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
-- The stubs in words, as every query, verify's digest over an archive's
-- stubs and the copy to PostgreSQL read them; inserting into it stores
-- the compact row (archived_keys_insert). The vocabularies are spelled
-- once each way: here and in that trigger.
CREATE VIEW archived_keys(action_key, archive_id, state, result, context_sha256) AS
SELECT action_key, archive_id,
    CASE state WHEN 0 THEN 'denied' WHEN 1 THEN 'rejected' WHEN 2 THEN 'expired'
               WHEN 3 THEN 'succeeded' WHEN 4 THEN 'failed' WHEN 5 THEN 'reconciled' END,
    CASE result WHEN 0 THEN '' WHEN 1 THEN 'executed' WHEN 2 THEN 'not-executed' END,
    context_sha256
FROM archived_stubs;

-- Evidence set aside (SPEC 7: a forged row never blocks a real decision).
-- A decisions or votes row that no event commits (inserted by hand) holds
-- the slot of the key's decision, or of the operator's vote; the real
-- one moves it here, whole, as evidence committed by its own event, and
-- takes the slot.
CREATE TABLE set_aside (
    id         INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL,
    fact_table TEXT NOT NULL CHECK(fact_table IN ('decisions', 'votes')),
    row_json   TEXT NOT NULL CHECK(length(row_json) <= 20000),
    operator   TEXT NOT NULL,
    at_ms      INTEGER NOT NULL
) STRICT;
CREATE INDEX set_aside_key ON set_aside(action_key, id);

-- The service's identities (SPEC 12). An agent reaching `tollgate serve`
-- over TCP is the holder of a bearer token an operator made. Each
-- token's creation and its revocation are facts like an operator change:
-- committed by its event and, on a signed ledger, signed, so a row
-- inserted by hand authenticates nobody. The secret is never stored:
-- digest is the SHA-256 of the whole bearer string, which carries 256
-- random bits, so an unsalted digest is enough. A revoke row carries no
-- digest.
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

-- The names a service principal (a token's name, or the Unix user a
-- socket's peer logs in as) may act as besides its own, each allowed or
-- withdrawn by an operator: the newest row for a pair says which.
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
CREATE INDEX principal_names_pair ON principal_names(who_key, agent_key, id);

-- A permit remembers the attempt that was issued it (SPEC 12: a call
-- whose answer is lost in transit). A client of the service sends, with
-- every retry of one guard call, an attempt id it generated; a later
-- guard of the same key, payload and agent carrying the same id, while
-- the permit is still executing, is given that permit again. Only the
-- digest is kept: an id read from status or export would let another
-- caller sharing the agent's name claim the permit.
CREATE TABLE permit_attempts (
    action_key     TEXT PRIMARY KEY,
    permit_id      TEXT NOT NULL,
    agent          TEXT NOT NULL,
    attempt_sha256 TEXT NOT NULL CHECK(length(attempt_sha256) = 64 AND attempt_sha256 NOT GLOB '*[^0-9a-f]*'),
    at_ms          INTEGER NOT NULL
) STRICT;

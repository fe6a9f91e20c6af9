-- A ledger at the last development schema (SQLite 20), made by
-- that build's code (every kind of fact, signed and unsigned); frozen.
-- Generated, never edited: its export is dev20_ledger.export.jsonl.
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
    set_ms      INTEGER NOT NULL
, approvers INTEGER NOT NULL DEFAULT 1 CHECK(approvers BETWEEN 1 AND 9), condition TEXT NOT NULL DEFAULT '' CHECK(length(condition) <= 2000), priority INTEGER NOT NULL DEFAULT 0 CHECK(priority BETWEEN -1000 AND 1000)) STRICT;
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
    at_ms       INTEGER NOT NULL
, result TEXT NOT NULL DEFAULT '' CHECK(length(result) <= 65536)) STRICT;
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
CREATE TABLE "action_index" (
    id          INTEGER NOT NULL UNIQUE,
    action_key  TEXT NOT NULL PRIMARY KEY,
    logical_key TEXT NOT NULL,
    epoch       TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL DEFAULT '',
    agent       TEXT NOT NULL DEFAULT '',
    stage       TEXT NOT NULL DEFAULT 'recorded' CHECK(stage IN ('recorded','pending','approved','denied','rejected','executing','uncertain','succeeded','failed','reconciled')),
    deadline_ms INTEGER NOT NULL DEFAULT 0,
    updated_ms  INTEGER NOT NULL DEFAULT 0,
    payload_sha256 TEXT NOT NULL,
    retained    INTEGER NOT NULL DEFAULT 0,
    redacted    INTEGER NOT NULL DEFAULT 0,
    target      TEXT NOT NULL DEFAULT '',
    context_sha256 TEXT NOT NULL DEFAULT '',
    -- An identical retry's answer as one value (fastCols in state.go, the
    -- same expression), kept with the row: reading it is as fast as the
    -- covering index of migration 0004 was, without its b-tree.
    answer      TEXT NOT NULL GENERATED ALWAYS AS (payload_sha256 || stage || ' ' || deadline_ms || ' ' || (retained + 2 * redacted) || context_sha256 || ' ' || agent) STORED
) STRICT, WITHOUT ROWID;
CREATE TABLE "payloads" (
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
    context_sha256 TEXT NOT NULL DEFAULT ''
        CHECK(context_sha256 = '' OR (length(context_sha256) = 64 AND context_sha256 NOT GLOB '*[^0-9a-f]*')),
    context        TEXT NOT NULL DEFAULT '' CHECK(length(context) <= 8192),
    CHECK((redacted = 1) = (canonical IS NULL))
) STRICT, WITHOUT ROWID;
CREATE TABLE "policy_evals" (
    action_key  TEXT NOT NULL PRIMARY KEY REFERENCES intents(action_key),
    mode        TEXT NOT NULL CHECK(mode IN ('auto', 'approval', 'deny')),
    ttl_ms      INTEGER NOT NULL,
    rule_id     INTEGER REFERENCES policy_rules(id),
    pattern     TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    approvers   INTEGER NOT NULL DEFAULT 1 CHECK(approvers BETWEEN 1 AND 9),
    explain     TEXT NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID;
CREATE TABLE "permits" (
    action_key  TEXT NOT NULL PRIMARY KEY REFERENCES intents(action_key),
    permit_id   TEXT NOT NULL UNIQUE CHECK(length(permit_id) = 36),
    agent       TEXT NOT NULL,
    issued_ms   INTEGER NOT NULL,
    lease_ms    INTEGER NOT NULL CHECK(lease_ms > issued_ms)
) STRICT, WITHOUT ROWID;
CREATE TABLE "events" (
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
CREATE TABLE "set_aside" (
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
INSERT INTO "intents"(action_key, payload_sha256, status) VALUES('k:deny','ee96f29f9e2c19b1072523a8132d0ae5a529043df29d86ffbf4a4bc6317e41ac','recorded');
INSERT INTO "intents"(action_key, payload_sha256, status) VALUES('k:later','67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848','recorded');
INSERT INTO "intents"(action_key, payload_sha256, status) VALUES('k:no','67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848','recorded');
INSERT INTO "intents"(action_key, payload_sha256, status) VALUES('k:rec','37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b','recorded');
INSERT INTO "intents"(action_key, payload_sha256, status) VALUES('k:refund','45158013d6d9bec3523b2678e0dde744bc2de52955808d1ac8b496a541b9029b','recorded');
INSERT INTO "intents"(action_key, payload_sha256, status) VALUES('k:two','f0f85855c8565e081f3613c73a9295210a45a164301159cca654615dacc1899a','recorded');
INSERT INTO "conflicts"(id, action_key, stored_sha256, attempted_sha256, attempted, redacted, differs, agent, at_ms) VALUES(1,'k:rec','37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b','ab34044ea285643e230d0339abdd5392d76004acc4c9fdb32c3a796033ce1ac2','{"body":"other","kind":"note","target":"t"}',0,'body','bot2',1796115600000);
INSERT INTO "policy_rules"(id, pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority) VALUES(1,'refund.*','auto',0,'root',1796115600000,1,'context.amount <= 50',1);
INSERT INTO "policy_rules"(id, pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority) VALUES(2,'ask','approval',3600000,'alice',1796115600000,1,'',0);
INSERT INTO "policy_rules"(id, pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority) VALUES(3,'two','approval',3600000,'alice',1796115600000,2,'',0);
INSERT INTO "policy_rules"(id, pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority) VALUES(4,'auto.*','auto',0,'alice',1796115600000,1,'',0);
INSERT INTO "policy_rules"(id, pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority) VALUES(5,'deny.*','deny',0,'alice',1796115600000,1,'',0);
INSERT INTO "approval_requests"(action_key, agent, requested_ms, expires_ms) VALUES('k:later','agent-7',1796115600000,1796119200000);
INSERT INTO "approval_requests"(action_key, agent, requested_ms, expires_ms) VALUES('k:no','agent-7',1796115600000,1796119200000);
INSERT INTO "approval_requests"(action_key, agent, requested_ms, expires_ms) VALUES('k:two','agent-7',1796115600000,1796119200000);
INSERT INTO "decisions"(action_key, decision, operator, reason, at_ms) VALUES('k:no','rejected','bob','not this one',1796115600000);
INSERT INTO "decisions"(action_key, decision, operator, reason, at_ms) VALUES('k:two','approved','bob','second',1796115600000);
INSERT INTO "reports"(id, action_key, permit_id, outcome, ref, latency_ms, kind, at_ms, result) VALUES(1,'k:refund','6f1c2a3b-4d5e-4f60-8a7b-000000000002','succeeded','pay-1',0,'accepted',1796115600000,'{"ok":true}');
INSERT INTO "reports"(id, action_key, permit_id, outcome, ref, latency_ms, kind, at_ms, result) VALUES(2,'k:two','6f1c2a3b-4d5e-4f60-8a7b-000000000003','unknown','',0,'accepted',1796115600000,'');
INSERT INTO "reconciliations"(action_key, result, operator, note, at_ms) VALUES('k:two','not-executed','alice','provider shows nothing',1796115602000);
INSERT INTO "epochs"(seq, epoch, operator, at_ms) VALUES(1,'6f1c2a3b-4d5e-4f60-8a7b-000000000004','alice',1796115602000);
INSERT INTO "fenced"(id, action_key, key_epoch, active_epoch, payload_sha256, agent, reason, at_ms) VALUES(1,'hsr1:00000000-0000-4000-8000-000000000001:x','00000000-0000-4000-8000-000000000001','','1ff55be109d02043fd3ab303852ff571948808515fa0ecf393d55a786f8d6f08','','epoch 00000000-0000-4000-8000-000000000001 is not active (no epoch has been activated)',1796115600000);
INSERT INTO "fenced"(id, action_key, key_epoch, active_epoch, payload_sha256, agent, reason, at_ms) VALUES(2,'k:later','','6f1c2a3b-4d5e-4f60-8a7b-000000000004','67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848','agent-7','pending under epoch "" when epoch 6f1c2a3b-4d5e-4f60-8a7b-000000000004 was activated: it can no longer be approved; use a key under the active epoch',1796115602000);
INSERT INTO "conflict_reviews"(conflict_id, operator, note, at_ms) VALUES(1,'alice','seen',1796115602000);
INSERT INTO "fenced_reviews"(fenced_id, operator, note, at_ms) VALUES(1,'alice','seen',1796115602000);
INSERT INTO "ledger_meta"(one, ledger_id, created_ms) VALUES(1,'6f1c2a3b-4d5e-4f60-8a7b-000000000001',1796115600000);
INSERT INTO "report_refusals"(id, action_key, permit_id, outcome, ref, latency_ms, rule, at_ms) VALUES(1,'k:refund','00000000-0000-4000-8000-000000000000','failed','',0,'key k:refund: permit id does not match the key''s permit',1796115600000);
INSERT INTO "operators"(id, name, name_key, action, public_key, fingerprint, at_ms) VALUES(1,'alice','alice','add','ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICxE+KdUEaOlgJnQhNLaIkgn0s5h7MwTk3BDro5kRBas','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115600000);
INSERT INTO "operators"(id, name, name_key, action, public_key, fingerprint, at_ms) VALUES(2,'bob','bob','add','ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFdMhZAT53RXXt4hCxnImgl8/sciUpH7dUUMTKACSfvF','SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI',1796115600000);
INSERT INTO "operators"(id, name, name_key, action, public_key, fingerprint, at_ms) VALUES(3,'bob','bob','remove','ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFdMhZAT53RXXt4hCxnImgl8/sciUpH7dUUMTKACSfvF','SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(1,'operators','2','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115600000,X'0000000B7373682D65643235353139000000400346D3AE72E85A669CFE99CB2005B2EE5E1849B0558D2606BB0BB57FB3713AC9A881D99422C9FF76F1D36911820363AA1BAF4C1873EA20BE9A2FD0AFCE35240E',1796115600000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(10,'conflict_reviews','1','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D6564323535313900000040CA0241FD59C1F8E2B251654259ECE5EDD8938E678D62673A7CD5B23410A99ADF7A3CF0F245A69F1DDF8CB045DF1F6AE8E9DF8E63DA7F82C6B365D8C146DED803',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(11,'fenced_reviews','1','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D6564323535313900000040C0616FD8955805966F543816703B7E62B3B2F68C4DC7791F234935755F4C169F958FAC0F692EC391566070C806C31A58366CC1F2D1A3391128D53F097186870C',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(12,'epochs','1','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D6564323535313900000040727FBA06BE62E7CB2DAB43771134AC3F6A32F6DCC0AEC7376A0703AD16C706D11205959DE9A247056BC909DA7ACD5391EB6A9110156EFD2772CBFC400330490D',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(13,'operators','3','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D6564323535313900000040DC77ADAC12D4FB64B36792E6F68C09118D0047D5C10E3844B08DF564364EEEAD6FD6E525A9565EB78D7C7C3CEBE7827418D2302BD293E2793C77C1FF4A7C9703',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(14,'agent_tokens','1','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D6564323535313900000040029D4106244A82ABB11A287FD80F454981B4242AC8D7518EE9F96734C4343F3F76482D3B7B69D0D527E6103A2FB157D08DB66CB375F16273ECF937532F2F9B0D',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(15,'agent_tokens','2','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D6564323535313900000040768CE04A02844D741A07E95EC25EAC640808F21C3A1AE6ECC07231A2C702EDE208A2A9874E25DDEC359490350E1C61C4916F8E5ABC54FB817B363428F7F1C106',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(16,'agent_tokens','3','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D6564323535313900000040B605267BB0DFC71CF8DE5E8BDE65CDBB7D36D6626304DFDBD470EEB425F1DC03A4D05926601538E6397B524127B68F589B51A801023DFD033F0494204889F706',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(17,'principal_names','1','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D6564323535313900000040A33A7E843A78AC314BFEAD9FB97837E6BEE48DC970DA295CAD3D5BC7A08160003EFEE952B0AF78EDB0AA8884FFC566FD7105262CAE01B566045BFBCD9FAFD206',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(18,'principal_names','2','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D656432353531390000004088C4750A1C067E2871400F2FCB8BCF5F51EA1C95E4813088490FEFC82C4BC95439AB27B5FB31B11C39D0EEA1F3AE425E4E7301503ABF5580624560C3C4DC7F06',1796115602000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(2,'policy_rules','2','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115600000,X'0000000B7373682D6564323535313900000040CF490944B48C45400BA9FE410A25C8AFB415F130C1ACEE79DCF0C615842B44E137AC1C9160A809C2644963885204DE946F05773B3490C65FCB5B04A646127001',1796115600000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(3,'policy_rules','3','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115600000,X'0000000B7373682D65643235353139000000405FB3524411B197956E8E97D0275CF6B4E0CC7D5C6BF006F1E1BAD13E77C6AEE654813F05CD9A52CA1202AC90FA0E57CBF1701F85CD09B4BD9937163671ADB603',1796115600000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(4,'policy_rules','4','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115600000,X'0000000B7373682D65643235353139000000405D9147FA3968DB625C75EE64B16E4C21C6646981A7E667B4BA773CB6B8BE29F52B4309DD98ACB70492EE947AEBA6498EDDC2C34E2290E5314CA58A74D341EC0F',1796115600000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(5,'policy_rules','5','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115600000,X'0000000B7373682D6564323535313900000040DA05FFC9C9BBBD923B4BF68A21B414F13175DD49CE468E5D9FE9688AC5135CFA7FF27044EFDDE66FE067667FB7C22E6C5C712B67FE96A30D4D75347A7D97DA0C',1796115600000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(6,'votes','1','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115600000,X'0000000B7373682D65643235353139000000409DE12D32D574F5160FA3284135E6CA01DFCECCB4609DCBD1F0638A3CD3BB93BAD9B27283EC1E8459C98B17BD19585C6A7B2FA1B8E9790310D70E6C836454E803',1796115600000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(7,'votes','2','SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI',1796115600000,X'0000000B7373682D6564323535313900000040B01B5C8AD5C757C4B3C8391817CF258378E3B718311DE8E1EF9F6CC61DCBAC51862EBFCE6F07C75EEB44263825EE926F8D4ABF53C5464973E47E2FF7613D2703',1796115600000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(8,'votes','3','SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI',1796115600000,X'0000000B7373682D65643235353139000000403A4287578C182D1139698D4C77C9DDAB136EBFB1C5EF72FEFD768B657B6C188DD4CE04B08826EC2F4111A558D48E72AE4FCF3F949BC255D1C1A29BA6F6CBA905',1796115600000);
INSERT INTO "signatures"(id, fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES(9,'reconciliations','k:two','SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4',1796115602000,X'0000000B7373682D65643235353139000000403BC176929FFE41DE52D473A6C366A629C048965DA86BFB16DDFC5648D89A26B02C12DC8E927EC06C91CABB600FA4A3A2E0CC39919104C9487300C3199C10DC06',1796115602000);
INSERT INTO "votes"(id, action_key, decision, operator, name_key, reason, at_ms) VALUES(1,'k:two','approved','alice','alice','first',1796115600000);
INSERT INTO "votes"(id, action_key, decision, operator, name_key, reason, at_ms) VALUES(2,'k:two','approved','bob','bob','second',1796115600000);
INSERT INTO "votes"(id, action_key, decision, operator, name_key, reason, at_ms) VALUES(3,'k:no','rejected','bob','bob','not this one',1796115600000);
INSERT INTO "chain_head"(one, seq, hash) VALUES(1,64,'1f75e70bbd2bfa142e63003a98420948b07ed280a18f1e33adb331a8a4153c9b');
INSERT INTO "action_index"(id, action_key, logical_key, epoch, kind, agent, stage, deadline_ms, updated_ms, payload_sha256, retained, redacted, target, context_sha256) VALUES(1,'k:refund','k:refund','','refund.card','bot1','succeeded',0,1796115600000,'45158013d6d9bec3523b2678e0dde744bc2de52955808d1ac8b496a541b9029b',1,0,'acct-1','ddccc0f8c09563212aae6802bc6f095158e222bf5564d12ad36947b5d13936b0');
INSERT INTO "action_index"(id, action_key, logical_key, epoch, kind, agent, stage, deadline_ms, updated_ms, payload_sha256, retained, redacted, target, context_sha256) VALUES(2,'k:two','k:two','','two','agent-7','reconciled',0,1796115602000,'f0f85855c8565e081f3613c73a9295210a45a164301159cca654615dacc1899a',1,0,'acct-1','');
INSERT INTO "action_index"(id, action_key, logical_key, epoch, kind, agent, stage, deadline_ms, updated_ms, payload_sha256, retained, redacted, target, context_sha256) VALUES(3,'k:no','k:no','','ask','agent-7','rejected',0,1796115600000,'67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848',1,0,'acct-1','');
INSERT INTO "action_index"(id, action_key, logical_key, epoch, kind, agent, stage, deadline_ms, updated_ms, payload_sha256, retained, redacted, target, context_sha256) VALUES(4,'k:later','k:later','','ask','agent-7','pending',1796119200000,1796115600000,'67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848',1,0,'acct-1','');
INSERT INTO "action_index"(id, action_key, logical_key, epoch, kind, agent, stage, deadline_ms, updated_ms, payload_sha256, retained, redacted, target, context_sha256) VALUES(5,'k:deny','k:deny','','deny.x','bot2','denied',0,1796115600000,'ee96f29f9e2c19b1072523a8132d0ae5a529043df29d86ffbf4a4bc6317e41ac',1,1,'','');
INSERT INTO "action_index"(id, action_key, logical_key, epoch, kind, agent, stage, deadline_ms, updated_ms, payload_sha256, retained, redacted, target, context_sha256) VALUES(6,'k:rec','k:rec','','note','bot2','recorded',0,1796115600000,'37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b',1,0,'t','');
INSERT INTO "payloads"(action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context) VALUES('k:deny','ee96f29f9e2c19b1072523a8132d0ae5a529043df29d86ffbf4a4bc6317e41ac',NULL,1,'deny.x','6d983f7d4b5d2c65b3066fdd15ec6c0fabcaa534e3f48ecb38e360eb9679a46e','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d','bot2',1796115600000,'','');
INSERT INTO "payloads"(action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context) VALUES('k:later','67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848','{"body":"refund 40","kind":"ask","target":"acct-1"}',0,'ask','2f2fc7f2e9ce13b09b84f63d54d0b4a59f4dbd46aea41da67023817e2d0c5e59','ba36a4edd92d37c66d4e05462aea603a0f34c2eea5cbe39d7b704f642fca326f','12e3e612f21a311079bbb13dd00eee0268a9c12379c3025b96e3755a2b2bc484','agent-7',1796115600000,'','');
INSERT INTO "payloads"(action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context) VALUES('k:no','67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848','{"body":"refund 40","kind":"ask","target":"acct-1"}',0,'ask','2f2fc7f2e9ce13b09b84f63d54d0b4a59f4dbd46aea41da67023817e2d0c5e59','ba36a4edd92d37c66d4e05462aea603a0f34c2eea5cbe39d7b704f642fca326f','12e3e612f21a311079bbb13dd00eee0268a9c12379c3025b96e3755a2b2bc484','agent-7',1796115600000,'','');
INSERT INTO "payloads"(action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context) VALUES('k:rec','37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b','{"body":"b","kind":"note","target":"t"}',0,'note','edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d','bot2',1796115600000,'','');
INSERT INTO "payloads"(action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context) VALUES('k:refund','45158013d6d9bec3523b2678e0dde744bc2de52955808d1ac8b496a541b9029b','{"body":"20 EUR","kind":"refund.card","target":"acct-1"}',0,'refund.card','518bb6062d5a78387281ad2300477af85783e6cdc73464564d8a4685f1c42a66','ba36a4edd92d37c66d4e05462aea603a0f34c2eea5cbe39d7b704f642fca326f','2628199be544c53d9b6df5d15c18349082f0efd942051bf75a58df1e13e39042','bot1',1796115600000,'ddccc0f8c09563212aae6802bc6f095158e222bf5564d12ad36947b5d13936b0','{"amount":20}');
INSERT INTO "payloads"(action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context) VALUES('k:two','f0f85855c8565e081f3613c73a9295210a45a164301159cca654615dacc1899a','{"body":"refund 40","kind":"two","target":"acct-1"}',0,'two','3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3','ba36a4edd92d37c66d4e05462aea603a0f34c2eea5cbe39d7b704f642fca326f','12e3e612f21a311079bbb13dd00eee0268a9c12379c3025b96e3755a2b2bc484','agent-7',1796115600000,'','');
INSERT INTO "policy_evals"(action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain) VALUES('k:deny','deny',0,5,'deny.*',1796115600000,1,'');
INSERT INTO "policy_evals"(action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain) VALUES('k:later','approval',3600000,2,'ask',1796115600000,1,'');
INSERT INTO "policy_evals"(action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain) VALUES('k:no','approval',3600000,2,'ask',1796115600000,1,'');
INSERT INTO "policy_evals"(action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain) VALUES('k:refund','auto',0,1,'refund.*',1796115600000,1,'{"rule_id":1,"pattern":"refund.*","condition":"context.amount \u003c= 50","read":{"context.amount":20},"semantics":2}');
INSERT INTO "policy_evals"(action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain) VALUES('k:two','approval',3600000,3,'two',1796115600000,2,'');
INSERT INTO "permits"(action_key, permit_id, agent, issued_ms, lease_ms) VALUES('k:refund','6f1c2a3b-4d5e-4f60-8a7b-000000000002','bot1',1796115600000,1796116500000);
INSERT INTO "permits"(action_key, permit_id, agent, issued_ms, lease_ms) VALUES('k:two','6f1c2a3b-4d5e-4f60-8a7b-000000000003','agent-7',1796115600000,1796115601000);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(1,'','ledger_created','tollgate','{"ledger_id":"6f1c2a3b-4d5e-4f60-8a7b-000000000001"}',1796115600000,'0000000000000000000000000000000000000000000000000000000000000000','701b7c1ad49615d7e445f00555a721295f89483298603134b65fdfd956f5dcd4','ledger_meta','1','bf19ea2ed965dcb5843e7d0ddeecb9e96881939d8dc6ae1a6881cf51e247b35c',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(10,'','operator_added','bob','{"fingerprint":"SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI"}',1796115600000,'f690dbec083befd0498641ede43878d84876dfa0309c17f8b54ddd28db085483','35ef5f34d19d5f001605187ed39b87b64cd08f9eb1ef14542883e0537c0f77fe','operators','2','953dfc7be347327d735f6ec34d35017701cb1749d5abe78ce79d5900be003ccb',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(11,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"2","table":"operators"}',1796115600000,'35ef5f34d19d5f001605187ed39b87b64cd08f9eb1ef14542883e0537c0f77fe','f413c8156f5b9cd42df62b9f844e346264e17d1c46a85e22dd6edee83e91da4c','signatures','1','74cb63ad9b0d08aa28c088674aa98e66c4d86d0f7ad3a2ccf7bdbdd993aa2aa9',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(12,'','policy_set','alice','{"approvers":1,"mode":"approval","pattern":"ask","rule_id":2,"ttl_ms":3600000}',1796115600000,'f413c8156f5b9cd42df62b9f844e346264e17d1c46a85e22dd6edee83e91da4c','5473629543928f355535cbdaecc79bb5f94d9049f94970c052619e19c3944a46','policy_rules','2','f6f363746111fd3297d994032a28b6c51f2bdf49f7a5ba164ef258c26866b05b',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(13,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"2","table":"policy_rules"}',1796115600000,'5473629543928f355535cbdaecc79bb5f94d9049f94970c052619e19c3944a46','9226e4ff7d350a266f937e732789ebe8d1814a7cfde30486f8d3ffd71604a64f','signatures','2','a93bd1b6e8f82079eb361d329f9a2761938e61d19ee9385942010f6e8b9d4f0a',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(14,'','policy_set','alice','{"approvers":2,"mode":"approval","pattern":"two","rule_id":3,"ttl_ms":3600000}',1796115600000,'9226e4ff7d350a266f937e732789ebe8d1814a7cfde30486f8d3ffd71604a64f','0e8081476884553496413c43eb24065e58fcb54894f8e422a297ac84449b8d77','policy_rules','3','8a3b97cac571d3de0b19e0a4a4b50eae0b62d8c8bde9a52e0dd4fb9f92aeafd9',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(15,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"3","table":"policy_rules"}',1796115600000,'0e8081476884553496413c43eb24065e58fcb54894f8e422a297ac84449b8d77','ede5898155a5807df0cf7300862b4e82d9b2e8f35bc6b4fa9658b56ee6852ab4','signatures','3','9b3450c62b5484e7c9624096b9f8528d4812822f7e817e48e56c2dcb4b0188b9',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(16,'','policy_set','alice','{"approvers":1,"mode":"auto","pattern":"auto.*","rule_id":4,"ttl_ms":0}',1796115600000,'ede5898155a5807df0cf7300862b4e82d9b2e8f35bc6b4fa9658b56ee6852ab4','e2353542e5f49a527dd2ddcbfea37d1d5a5256ec7f76d940d4107fcd703fc78d','policy_rules','4','ab670bf0f891024e8c137b7704eaaf36eaba0e98ebbb032eeebc08f18d79ee02',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(17,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"4","table":"policy_rules"}',1796115600000,'e2353542e5f49a527dd2ddcbfea37d1d5a5256ec7f76d940d4107fcd703fc78d','c6f4c996cfcaa6b77ed1262265bea019466a2173036ff25147a8f3d542f12337','signatures','4','827ba478b8954aa232b029667dced0ef17735e919a57bddce128ebb9c2e6b238',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(18,'','policy_set','alice','{"approvers":1,"mode":"deny","pattern":"deny.*","rule_id":5,"ttl_ms":0}',1796115600000,'c6f4c996cfcaa6b77ed1262265bea019466a2173036ff25147a8f3d542f12337','505b287f7be6863e50a15b6876dd6f39d3ea6ca5cc10a60e6533b846dd395886','policy_rules','5','c218a26bd53582462d5cc952b41bc35ccee86bb2a173c5dbf2568e5c822f7db4',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(19,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"5","table":"policy_rules"}',1796115600000,'505b287f7be6863e50a15b6876dd6f39d3ea6ca5cc10a60e6533b846dd395886','e5ea7564c6cedc741dd64029264b930834f859d084372cfd9b43a27257fa568d','signatures','5','39cd5dbc8f56c4fe84b57f107e7f150548b1867283ab608b0b999f564f4749ac',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(2,'','policy_set','root','{"approvers":1,"mode":"auto","pattern":"refund.*","rule_id":1,"ttl_ms":0}',1796115600000,'701b7c1ad49615d7e445f00555a721295f89483298603134b65fdfd956f5dcd4','56907402b319586ea1ea6290a2df75ad6c2c9a4dcefe0216cd42b9cc8dc96b14','policy_rules','1','44d2a731a438bd5938a3fb0d49396520ea92ab774de77c16e7a4768794e29b83',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(20,'k:two','recorded','agent-7','{"kind":"two","payload_sha256":"f0f85855c8565e081f3613c73a9295210a45a164301159cca654615dacc1899a","redacted":false}',1796115600000,'e5ea7564c6cedc741dd64029264b930834f859d084372cfd9b43a27257fa568d','a347971f6e75c67b954abe0ed5dd08994d4234ffd87e57b3705192d3c4015eb9','payloads','k:two','3a376800a52ceff3317b8609801f78989fef335727124af497336ca1d4f3fa83',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(21,'k:two','policy_evaluated','agent-7','{"approvers":2,"mode":"approval","pattern":"two","ttl_ms":3600000}',1796115600000,'a347971f6e75c67b954abe0ed5dd08994d4234ffd87e57b3705192d3c4015eb9','3661b8709b2da93f0fc5a320b4f9a00a6ee0e16413eaeb924ea7978107c04143','policy_evals','k:two','b2989d00db168a77632911ab7240d52c458d3af46fd187571f836f20ed309e9a',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(22,'k:two','approval_requested','agent-7','{"expires_ms":1796119200000}',1796115600000,'3661b8709b2da93f0fc5a320b4f9a00a6ee0e16413eaeb924ea7978107c04143','b60ead0086feae5448cda43bccd69996a523fd5b3f0eaf6a5c78b452221d716c','approval_requests','k:two','2fa5b0e8035b89d0b622f00de2f98e5aba47050db2723830bd09194c1237d1c3',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(23,'k:two','vote','alice','{"decision":"approved","reason":"first"}',1796115600000,'b60ead0086feae5448cda43bccd69996a523fd5b3f0eaf6a5c78b452221d716c','627c0bbea8adfc3ef39ed0eb9592b6ded4a051f4ffbb8926432d55fd09b5fbeb','votes','1','8c29c6dae06f3cb6474ae6df3ef88075e659542a42de21ec18866dfe91dc9536',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(24,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"votes"}',1796115600000,'627c0bbea8adfc3ef39ed0eb9592b6ded4a051f4ffbb8926432d55fd09b5fbeb','dfac2f314dd0cbce560a798c09848fd8b18b19ab1e4998632ab7b3326c8fd48c','signatures','6','3fe0c3161d22cc22f774abca0a22fee0cb205ce6f9cbdceedfcc6d77de8f083f',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(25,'k:two','vote','bob','{"decision":"approved","reason":"second"}',1796115600000,'dfac2f314dd0cbce560a798c09848fd8b18b19ab1e4998632ab7b3326c8fd48c','1c91a025306106a23d706a0fe36bf14500caa7e03718a78b764f845b8260969c','votes','2','406193f6392ee877f37c6b9ee3d986fb4f8dc75af4830ea3b9c2937f21e6acb0',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(26,'k:two','approved','bob','{"reason":"second"}',1796115600000,'1c91a025306106a23d706a0fe36bf14500caa7e03718a78b764f845b8260969c','8ec853ef3b058bcfb5c3154c4fbb3af9447e93ca16bafa46e6c0dbc1c5042613','decisions','k:two','05d8ed2d1306d8bbf5d2edd6bff8bf9203888c85137cdc8606820a347420a8e3',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(27,'','signed','bob','{"fingerprint":"SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI","row":"2","table":"votes"}',1796115600000,'8ec853ef3b058bcfb5c3154c4fbb3af9447e93ca16bafa46e6c0dbc1c5042613','bbf1f051cad6ee2412fbca9aa2a09aa088520694063ae82bb838849d74af3dd8','signatures','7','212103e392238fee1beadbdfd4549e0d8030820a3fe81c31806c18c1c0385e50',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(28,'k:two','permit_issued','agent-7','{"lease_ms":1796115601000,"permit_id":"6f1c2a3b-4d5e-4f60-8a7b-000000000003"}',1796115600000,'bbf1f051cad6ee2412fbca9aa2a09aa088520694063ae82bb838849d74af3dd8','b3f5cfe9eabaa52e964e49893e1203d9a9500a9a5b05e1fc28f6cd9999972c06','permits','k:two','88b5a0246e23c1c8f2d0346d27d808231241d1ebc9931028dd7c6a6253183206',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(29,'k:two','report_accepted','6f1c2a3b-4d5e-4f60-8a7b-000000000003','{"latency_ms":0,"outcome":"unknown","ref":""}',1796115600000,'b3f5cfe9eabaa52e964e49893e1203d9a9500a9a5b05e1fc28f6cd9999972c06','cfa672b06e9ddca11c6696a2c1dd890df97669064a2f6f41d43cb0dd377f4581','reports','2','79ee4aa72d17f9859d66965709f45b95e5baa8213b91e259712c3383ea33ff6f',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(3,'k:refund','recorded','bot1','{"kind":"refund.card","payload_sha256":"45158013d6d9bec3523b2678e0dde744bc2de52955808d1ac8b496a541b9029b","redacted":false}',1796115600000,'56907402b319586ea1ea6290a2df75ad6c2c9a4dcefe0216cd42b9cc8dc96b14','9a4f9ebd4fff0c356c3b4a3a639c19540f6e1df0e7747c944d3d31f28d39e216','payloads','k:refund','26c7c0032a0e79e1d8e46a04f945901066a475bf6ad16a0aa75f0be0bcbd52a6',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(30,'k:no','recorded','agent-7','{"kind":"ask","payload_sha256":"67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848","redacted":false}',1796115600000,'cfa672b06e9ddca11c6696a2c1dd890df97669064a2f6f41d43cb0dd377f4581','7b72c7f0d254fb31d64763c70247f3ec333e80926b6c62b382148c47811498fc','payloads','k:no','c1fd46e9e4d4f6f93990d7e089104bfed272f6863c5b225b305084d70ee39886',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(31,'k:no','policy_evaluated','agent-7','{"approvers":1,"mode":"approval","pattern":"ask","ttl_ms":3600000}',1796115600000,'7b72c7f0d254fb31d64763c70247f3ec333e80926b6c62b382148c47811498fc','ead117372282501e7dd2d07326bc65e196280cfe23aa6d0489c5aaa345ed5e3c','policy_evals','k:no','dc2a69bfeb2376b8bd158d8070460d68aae87cd42c309fc50361369b420ebd3d',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(32,'k:no','approval_requested','agent-7','{"expires_ms":1796119200000}',1796115600000,'ead117372282501e7dd2d07326bc65e196280cfe23aa6d0489c5aaa345ed5e3c','248f0c8c678a0810948f7795c8d9e5ce0b2e1184bc166e762cf54472883b1288','approval_requests','k:no','c32bda4787e8b4029e08fce5ae4984ee2207982ba627d1784f5c90fdeb865f27',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(33,'k:no','vote','bob','{"decision":"rejected","reason":"not this one"}',1796115600000,'248f0c8c678a0810948f7795c8d9e5ce0b2e1184bc166e762cf54472883b1288','48b276e335f4a1b1ebda62bb77d0596b84e7214a8b40b1b2d441a481a61d9695','votes','3','7be20277900912f02719270fc7f092b9f3750d583c809bc74b51709c0e980534',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(34,'k:no','rejected','bob','{"reason":"not this one"}',1796115600000,'48b276e335f4a1b1ebda62bb77d0596b84e7214a8b40b1b2d441a481a61d9695','60fb9bb4ee5117d238753dd41d0c5a746ac7695f8f720c83e2de45821f107311','decisions','k:no','814d678759d9211fd316a007bdd330fef5f1f64ed153b12e28e7ee67abd3dd2f',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(35,'','signed','bob','{"fingerprint":"SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI","row":"3","table":"votes"}',1796115600000,'60fb9bb4ee5117d238753dd41d0c5a746ac7695f8f720c83e2de45821f107311','1fbcc8cdb2ce9e9aba28d334ea3ec74c14c3f19874722f74eeda86a23f9eb0c8','signatures','8','11417ad138c10da84182924b39a4713fb5fd66f1a1d840462658876f7b92f9dd',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(36,'k:later','recorded','agent-7','{"kind":"ask","payload_sha256":"67ce5553a49e6c5b7d507d19612c37aba3d5fdca8970871addba25b333067848","redacted":false}',1796115600000,'1fbcc8cdb2ce9e9aba28d334ea3ec74c14c3f19874722f74eeda86a23f9eb0c8','8338bf85247dd74f0e1e6dacfe8e5a5a34610aa67e7037f12c784a793bf15fa7','payloads','k:later','b67bb2102740f45fc064a321990d3504671c8bd29869c51a7b3f6b9482a08ae7',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(37,'k:later','policy_evaluated','agent-7','{"approvers":1,"mode":"approval","pattern":"ask","ttl_ms":3600000}',1796115600000,'8338bf85247dd74f0e1e6dacfe8e5a5a34610aa67e7037f12c784a793bf15fa7','76edac21d18181b408c9f7c539afbd37792d67dc0a9fbc16a4c53843fe92ef91','policy_evals','k:later','53ef9a4eea2fe119f2810c885da90c7957b30b4e02c2db26c9fbaa3047e8b4c3',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(38,'k:later','approval_requested','agent-7','{"expires_ms":1796119200000}',1796115600000,'76edac21d18181b408c9f7c539afbd37792d67dc0a9fbc16a4c53843fe92ef91','b84b9f8ea723fe8b260ea0ad04bc96e58fdcfb0bea2aa6c1b9ceaa2bb729a532','approval_requests','k:later','7b5da80464926a3ff0853d0eea8be2474485902dbe86ac536a0080524ec721e1',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(39,'k:deny','recorded','bot2','{"kind":"deny.x","payload_sha256":"ee96f29f9e2c19b1072523a8132d0ae5a529043df29d86ffbf4a4bc6317e41ac","redacted":true}',1796115600000,'b84b9f8ea723fe8b260ea0ad04bc96e58fdcfb0bea2aa6c1b9ceaa2bb729a532','8a6fdb87feb5a8841e13285dc7a339e82586619918ba6905032456f6d0ec9554','payloads','k:deny','5bf0daab870098e5ef036983bc846e5bae9b56ebffc5022b7dec2375286c1f03',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(4,'k:refund','policy_evaluated','bot1','{"approvers":1,"mode":"auto","pattern":"refund.*","ttl_ms":0}',1796115600000,'9a4f9ebd4fff0c356c3b4a3a639c19540f6e1df0e7747c944d3d31f28d39e216','144bda20a6c4dc7665eaba409489ebba7613827439ce67c7aea5a994bed5147d','policy_evals','k:refund','9aa50751c698b7b08f6c191b4591fb7452eba9d75b4ba8f8d7ccc76d1d8c37de',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(40,'k:deny','policy_evaluated','bot2','{"approvers":1,"mode":"deny","pattern":"deny.*","ttl_ms":0}',1796115600000,'8a6fdb87feb5a8841e13285dc7a339e82586619918ba6905032456f6d0ec9554','5918dcf7888ff8ca75fd26e61c68682f1bab3e1fca73bafb92e7565a46606ec8','policy_evals','k:deny','2423930e3af324490df61c1465fdd79a541ebb848b934867cbe55ecc5e5bc251',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(41,'k:rec','recorded','bot2','{"kind":"note","payload_sha256":"37debe55fab30ca4903f3bb07fc121d73737d5dca2a61a4a2ade5d9fd0285d9b","redacted":false}',1796115600000,'5918dcf7888ff8ca75fd26e61c68682f1bab3e1fca73bafb92e7565a46606ec8','3f63337bcb98b8cecae98a66939994d2d14dd5fa05ea5198519038b9de1467e1','payloads','k:rec','56eff2afb557064f858a7ed340ee639aebc9126e0ecc7e2b91bc0bfda98166ed',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(42,'k:rec','conflict','bot2','{"attempted_sha256":"ab34044ea285643e230d0339abdd5392d76004acc4c9fdb32c3a796033ce1ac2","conflict_id":1,"differs":"body"}',1796115600000,'3f63337bcb98b8cecae98a66939994d2d14dd5fa05ea5198519038b9de1467e1','2fe6296571075942a78bf888341c06d30d218850b497c673028d9dc183ff0b20','conflicts','1','0f692cc36aeec3f371092db331408c03e875dbf03925610b4bd99a01c1b4fd51',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(43,'hsr1:00000000-0000-4000-8000-000000000001:x','fenced','','{"fenced_id":1,"reason":"epoch 00000000-0000-4000-8000-000000000001 is not active (no epoch has been activated)"}',1796115600000,'2fe6296571075942a78bf888341c06d30d218850b497c673028d9dc183ff0b20','7d4dfbe266ac667288282c5629853d22c8d0b260bbb73fb0c608e4d876a09f02','fenced','1','1fc9831d116160ded3d68d2233a1948d5f7d022edcd965dc6a90ce465cce5690',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(44,'k:two','reconciled','alice','{"note":"provider shows nothing","result":"not-executed"}',1796115602000,'7d4dfbe266ac667288282c5629853d22c8d0b260bbb73fb0c608e4d876a09f02','09a8eb6c0ce6995a8e0d845c3dfcf0152506dc36583c133794933888bdf60df0','reconciliations','k:two','b446a19da9ed658b67a3d00290e02594241fee582b0b39db78b5864fa565e3fb',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(45,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"k:two","table":"reconciliations"}',1796115602000,'09a8eb6c0ce6995a8e0d845c3dfcf0152506dc36583c133794933888bdf60df0','7e2239ffab104c1d8908cfd2524e6719b53aa2e982fa6f0bbc1c9e056af105da','signatures','9','bdd32fea5447249590a24a5d8b221a7362701fc3f2f6f68549a05dd1a9b07607',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(46,'k:rec','conflict_reviewed','alice','{"conflict_id":1,"note":"seen"}',1796115602000,'7e2239ffab104c1d8908cfd2524e6719b53aa2e982fa6f0bbc1c9e056af105da','cc762290c49fd2d3e7ae38d1c0273a824baeb11371d75d16b728059bbe33a428','conflict_reviews','1','41637ae1319f64f5cb348ae09ce8ca5c685af7fa455b634012bded3bc33baf20',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(47,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"conflict_reviews"}',1796115602000,'cc762290c49fd2d3e7ae38d1c0273a824baeb11371d75d16b728059bbe33a428','8b013268970d00ebd1fc839b0bdc3fde360e91dd715e3c568ca286a9c130167c','signatures','10','ccf27498366b7b5ea4397e0588b931c7a5380e49f3ce4822bb6d3b89097b4a6d',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(48,'hsr1:00000000-0000-4000-8000-000000000001:x','fenced_reviewed','alice','{"fenced_id":1,"note":"seen"}',1796115602000,'8b013268970d00ebd1fc839b0bdc3fde360e91dd715e3c568ca286a9c130167c','1addfe207169c3310fcb450be988286f2f88d9221303f1d81c0b6ec50f72c7b3','fenced_reviews','1','4a67b215d532d78590d0bd2442d7fb63b65f42be168812150c68b33fcde2f2a9',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(49,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"fenced_reviews"}',1796115602000,'1addfe207169c3310fcb450be988286f2f88d9221303f1d81c0b6ec50f72c7b3','c18a63556279bc3cf8bf5aa19cf04cc3efed3edb27ab2228d28758e7392be6aa','signatures','11','e72717d0b8e9fea53c7f62ae118ca52de0817f3fe182b9d7a4086553fdec87d3',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(5,'k:refund','permit_issued','bot1','{"lease_ms":1796116500000,"permit_id":"6f1c2a3b-4d5e-4f60-8a7b-000000000002"}',1796115600000,'144bda20a6c4dc7665eaba409489ebba7613827439ce67c7aea5a994bed5147d','a935a0256b32117214a26e26790d3997ab8a85cc1ee17245ca68e6ab56b6a7eb','permits','k:refund','4decc42a375fbc2edd61e469e6982e63ecc4cf7954f0dd58f20a7ae55f85d0b0',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(50,'','epoch_activated','alice','{"epoch":"6f1c2a3b-4d5e-4f60-8a7b-000000000004"}',1796115602000,'c18a63556279bc3cf8bf5aa19cf04cc3efed3edb27ab2228d28758e7392be6aa','95a1f77a9ba29075411de62f7e1aa38f64e84fa6b8d5f13cd91b18eef81a981e','epochs','1','42c6b6386ff82f3c9cde9ba50cacd2628a4bc954cd7ae9addccc848b20d254f8',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(51,'k:later','fenced','agent-7','{"fenced_id":2,"reason":"pending under epoch \"\" when epoch 6f1c2a3b-4d5e-4f60-8a7b-000000000004 was activated: it can no longer be approved; use a key under the active epoch"}',1796115602000,'95a1f77a9ba29075411de62f7e1aa38f64e84fa6b8d5f13cd91b18eef81a981e','e4434c2d1b825f003d926a23e53bbcf3c3c9b540d298e51ff793bba3fe2a22aa','fenced','2','ba1a01aff516357f6b2e2a57f0bb8a83fb932603188a2cae4d402b86696bf119',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(52,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"epochs"}',1796115602000,'e4434c2d1b825f003d926a23e53bbcf3c3c9b540d298e51ff793bba3fe2a22aa','52a2c9c59796bb6ae05a5c018d0dad27e7f0d979a76c0984c249ee19cfec3106','signatures','12','9ffbca7fe16c7f6e143c79da8594f3494f1214214a16ac15474a60e2d131c07d',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(53,'','operator_removed','bob','{"fingerprint":"SHA256:2eTADNzIoxUTBEeXYHoMBx8oPvPc98nUfWDTgNh6zHI"}',1796115602000,'52a2c9c59796bb6ae05a5c018d0dad27e7f0d979a76c0984c249ee19cfec3106','062c3a32b980c039a206d4aef061ec8fe77bf73025cf2243ff32c9cb2081eb48','operators','3','d16e1c7e443e42a3356349e524cf769decb528d89141f4e838c004f598eb2124',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(54,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"3","table":"operators"}',1796115602000,'062c3a32b980c039a206d4aef061ec8fe77bf73025cf2243ff32c9cb2081eb48','eeef1f20d5844196b087ac62dfb82f59b5f0754005b16d4e8550d5438b72d2eb','signatures','13','0dcf8bbcf6309f0700f6709ceda965046d61a863009a6f586e52f4d013d8b7b6',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(55,'','token_created','alice','{"name":"svc-bot","scope":"agent","token_id":"fae33e4ae79d4b04"}',1796115602000,'eeef1f20d5844196b087ac62dfb82f59b5f0754005b16d4e8550d5438b72d2eb','096943847ea564e1506b8bd9b0c8a576a9af5ab4e9a3a4291b3a07bad863fdf5','agent_tokens','1','02398671323234b8849770e792db7abecf2b52ddee199e0d1c659b38e409f842',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(56,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"agent_tokens"}',1796115602000,'096943847ea564e1506b8bd9b0c8a576a9af5ab4e9a3a4291b3a07bad863fdf5','0f9b2a09fe2ae9b0eee047890fbf175951593f1be4222d5126cbd3ca57b83250','signatures','14','6c0d637fd153438f9a6bec7dea26d2126b235827254d340294a54d08de93249b',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(57,'','token_created','alice','{"name":"svc-op","scope":"operator","token_id":"48869e90de8ef534"}',1796115602000,'0f9b2a09fe2ae9b0eee047890fbf175951593f1be4222d5126cbd3ca57b83250','fe54aee0a3f0f1769459e11e3daa4d81e90a61c61305cc9b5611f4712ddb3abd','agent_tokens','2','4a56af8db56e65d57e2221bf1ce1c3dfa60c6ed458354c77c9d94ac12635de5e',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(58,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"2","table":"agent_tokens"}',1796115602000,'fe54aee0a3f0f1769459e11e3daa4d81e90a61c61305cc9b5611f4712ddb3abd','2c462de7d38442ca828a512937c1605a4674835bf963f1908205d8516347605a','signatures','15','e3640178639d4f6b616f2107476f8914fdca8bdcfba28ad06f542e38a9c7a0b2',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(59,'','token_revoked','alice','{"name":"svc-bot","token_id":"fae33e4ae79d4b04"}',1796115602000,'2c462de7d38442ca828a512937c1605a4674835bf963f1908205d8516347605a','4420cf846f4cd0178016f25f653bbcb908f14a79a24d28f41fb8d412f454973e','agent_tokens','3','be9839b94645b63d02b3e356dad232e5ffe9d3b42fdfabd0dce344fed3ec772b',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(6,'k:refund','attempt_recorded','bot1','{"permit_id":"6f1c2a3b-4d5e-4f60-8a7b-000000000002"}',1796115600000,'a935a0256b32117214a26e26790d3997ab8a85cc1ee17245ca68e6ab56b6a7eb','cc778632e0d186cfee626dda2b9fee6438db5c730f60872ce944ff545a797922','permit_attempts','k:refund','4565dab941471f422260dce7517249bee81246fb08316bb02f79af84a106a667',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(60,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"3","table":"agent_tokens"}',1796115602000,'4420cf846f4cd0178016f25f653bbcb908f14a79a24d28f41fb8d412f454973e','dc809ab18aaa32bdacefdd6fd0657c1399c846e4d518ef23927e37d5a24a3d10','signatures','16','91fac82bc01a28b0655ce96fc7c9af6c95bc237887502146e485116963af6bac',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(61,'','principal_allowed','alice','{"agent":"bot1","who":"svc-op"}',1796115602000,'dc809ab18aaa32bdacefdd6fd0657c1399c846e4d518ef23927e37d5a24a3d10','e379f01368a751f713f0e1f52377ae3d9f6eb988b499b8b729264f2729739db5','principal_names','1','2e40afa9ddd62d81e795d079ab2c4c494a396930049ae44013926cbfb95b5173',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(62,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"1","table":"principal_names"}',1796115602000,'e379f01368a751f713f0e1f52377ae3d9f6eb988b499b8b729264f2729739db5','f13032918c3203a96247cd0297d6dd574ef9ff05469d807615de847672b81982','signatures','17','0ca7a572fee02d9b85d0b5dd183a775c6c5047c5a2cb8a2b40f0ff042c20ee27',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(63,'','principal_revoked','alice','{"agent":"bot1","who":"svc-op"}',1796115602000,'f13032918c3203a96247cd0297d6dd574ef9ff05469d807615de847672b81982','6db559c3fe66d89ae51426b54392caf60f0464ba7ac1b03fee7ae1fc44f3fd49','principal_names','2','a321f37f865a3da23b8cc2820d63950742794d020c59e1546d486c5d0e9226e7',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(64,'','signed','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4","row":"2","table":"principal_names"}',1796115602000,'6db559c3fe66d89ae51426b54392caf60f0464ba7ac1b03fee7ae1fc44f3fd49','1f75e70bbd2bfa142e63003a98420948b07ed280a18f1e33adb331a8a4153c9b','signatures','18','ffa243caa9f8fe5caebc61134371bfa221bae6878d2b7e159ae782d777301ac3',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(7,'k:refund','report_accepted','6f1c2a3b-4d5e-4f60-8a7b-000000000002','{"latency_ms":0,"outcome":"succeeded","ref":"pay-1"}',1796115600000,'cc778632e0d186cfee626dda2b9fee6438db5c730f60872ce944ff545a797922','b61a6632c2f9614f7335940e49ee478446aeb2a7221057b18a5a313c8c1d930e','reports','1','5dbfaef656a4e12f4fa2c7df040e9c627bf0c9d4ec780c268979bd10ac96c422',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(8,'k:refund','report_refused_unfiled','00000000-0000-4000-8000-000000000000','{"outcome":"failed","rule":"key k:refund: permit id does not match the key''s permit"}',1796115600000,'b61a6632c2f9614f7335940e49ee478446aeb2a7221057b18a5a313c8c1d930e','968af52b7e490a5527c1a0f8a999f6b05124582d812584d723b7ae6c8f4cd1e1','report_refusals','1','8bbc3e06404a36f27362cc6a8e69db35b0d978bf7cc3618478e2956240470f34',2);
INSERT INTO "events"(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv) VALUES(9,'','operator_added','alice','{"fingerprint":"SHA256:s9Yki5H9N95+ibGKuNK/8HDk4YrGYMVli71hNGE44G4"}',1796115600000,'968af52b7e490a5527c1a0f8a999f6b05124582d812584d723b7ae6c8f4cd1e1','f690dbec083befd0498641ede43878d84876dfa0309c17f8b54ddd28db085483','operators','1','e11ef6098936f70307975713a0711011092eaf3107e13ada72ecf19794eb742a',2);
INSERT INTO "agent_tokens"(id, token_id, action, name, name_key, scope, digest, operator, at_ms) VALUES(1,'fae33e4ae79d4b04','create','svc-bot','svc-bot','agent','9df2df0abd6b47088d5acd90fa191394d10253f12d391956f58f4b33d6c66ea2','alice',1796115602000);
INSERT INTO "agent_tokens"(id, token_id, action, name, name_key, scope, digest, operator, at_ms) VALUES(2,'48869e90de8ef534','create','svc-op','svc-op','operator','7589ba8f637ac0659dbf7a242a66099e09f6b1ddd527566b3ea560170240facc','alice',1796115602000);
INSERT INTO "agent_tokens"(id, token_id, action, name, name_key, scope, digest, operator, at_ms) VALUES(3,'fae33e4ae79d4b04','revoke','svc-bot','svc-bot','agent','','alice',1796115602000);
INSERT INTO "principal_names"(id, who, who_key, agent, agent_key, action, operator, at_ms) VALUES(1,'svc-op','svc-op','bot1','bot1','allow','alice',1796115602000);
INSERT INTO "principal_names"(id, who, who_key, agent, agent_key, action, operator, at_ms) VALUES(2,'svc-op','svc-op','bot1','bot1','revoke','alice',1796115602000);
INSERT INTO "permit_attempts"(action_key, permit_id, agent, attempt_sha256, at_ms) VALUES('k:refund','6f1c2a3b-4d5e-4f60-8a7b-000000000002','bot1','82d373a931cd3ca890ebfd8b3f985a369ad22360c0998058980fac614a76cfbc',1796115600000);
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
CREATE TRIGGER approval_requests_no_update BEFORE UPDATE ON approval_requests
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only'); END;
CREATE TRIGGER approval_requests_no_delete BEFORE DELETE ON approval_requests
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only'); END;
CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions is append-only'); END;
CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions is append-only'); END;
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
CREATE TRIGGER policy_rules_no_replace BEFORE INSERT ON policy_rules
WHEN EXISTS (SELECT 1 FROM policy_rules WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only: a row is never replaced'); END;
CREATE TRIGGER approval_requests_no_replace BEFORE INSERT ON approval_requests
WHEN EXISTS (SELECT 1 FROM approval_requests WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only: a row is never replaced'); END;
CREATE TRIGGER decisions_no_replace BEFORE INSERT ON decisions
WHEN EXISTS (SELECT 1 FROM decisions WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'decisions is append-only: a row is never replaced'); END;
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
CREATE TRIGGER reports_no_replace_accepted BEFORE INSERT ON reports
WHEN NEW.kind = 'accepted' AND EXISTS (SELECT 1 FROM reports WHERE action_key = NEW.action_key AND kind = 'accepted')
BEGIN SELECT RAISE(ABORT, 'reports is append-only: an accepted report is never replaced'); END;
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
CREATE TRIGGER chain_head_forward BEFORE UPDATE ON chain_head
WHEN NEW.one IS NOT OLD.one OR NEW.seq <= OLD.seq
BEGIN
    SELECT RAISE(ABORT, 'the chain head only moves forward');
END;
CREATE TRIGGER chain_head_kept BEFORE DELETE ON chain_head
BEGIN
    SELECT RAISE(ABORT, 'the chain head is never removed');
END;
CREATE TRIGGER archives_no_update BEFORE UPDATE ON archives
BEGIN SELECT RAISE(ABORT, 'archives is append-only'); END;
CREATE TRIGGER archives_no_delete BEFORE DELETE ON archives
BEGIN SELECT RAISE(ABORT, 'archives is append-only'); END;
CREATE TRIGGER pruned_events_no_update BEFORE UPDATE ON pruned_events
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only'); END;
CREATE TRIGGER pruned_events_no_delete BEFORE DELETE ON pruned_events
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only'); END;
CREATE TRIGGER action_index_no_delete BEFORE DELETE ON action_index
BEGIN SELECT RAISE(ABORT, 'action_index rows are never deleted'); END;
CREATE TRIGGER action_index_no_replace BEFORE INSERT ON action_index
WHEN EXISTS (SELECT 1 FROM action_index WHERE id = NEW.id OR action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'action_index rows are never replaced'); END;
CREATE TRIGGER intents_index AFTER INSERT ON intents
BEGIN
    SELECT RAISE(ABORT, 'intents is append-only: a key is never replaced')
    WHERE EXISTS (SELECT 1 FROM action_index WHERE action_key = NEW.action_key)
       OR EXISTS (SELECT 1 FROM archived_keys WHERE action_key = NEW.action_key);
    INSERT INTO action_index(id, action_key, logical_key, payload_sha256)
        VALUES ((SELECT coalesce(max(id), 0) + 1 FROM action_index), NEW.action_key, NEW.action_key, NEW.payload_sha256);
END;
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
CREATE TRIGGER archived_stubs_no_update BEFORE UPDATE ON archived_stubs
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;
CREATE TRIGGER archived_stubs_no_delete BEFORE DELETE ON archived_stubs
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;
CREATE TRIGGER archives_no_replace BEFORE INSERT ON archives
WHEN EXISTS (SELECT 1 FROM archives WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'archives is append-only: a row is never replaced'); END;
CREATE TRIGGER pruned_events_no_replace BEFORE INSERT ON pruned_events
WHEN EXISTS (SELECT 1 FROM pruned_events WHERE first_seq = NEW.first_seq OR last_seq = NEW.last_seq)
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only: a row is never replaced'); END;
CREATE TRIGGER archived_stubs_no_replace BEFORE INSERT ON archived_stubs
WHEN EXISTS (SELECT 1 FROM archived_stubs WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only: a row is never replaced'); END;
CREATE TRIGGER chain_head_no_replace BEFORE INSERT ON chain_head
WHEN EXISTS (SELECT 1 FROM chain_head)
BEGIN SELECT RAISE(ABORT, 'the chain head only moves forward: it is never replaced'); END;
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

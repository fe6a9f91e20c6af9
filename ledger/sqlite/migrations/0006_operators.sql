-- Operators, signed facts and quorum (schema 6).
--
-- An operator is a name bound to an Ed25519 public key. The set changes
-- only by appending rows: 'add' registers a key under a name, 'remove'
-- withdraws it. The first registration makes the ledger signed for ever;
-- every later change, and every operator-authored fact after it, carries
-- a row in signatures over a canonical statement (see ledger/statement.go).
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
-- in wire form.
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

-- One operator's decision on a request. A request needs the quorum its
-- policy evaluation stored (approvers) of distinct operators' approvals;
-- one rejection decides it. The outcome stays in decisions, written when
-- the quorum is reached or at the first rejection.
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

-- The quorum a rule asks for and an evaluation applied. Rows written
-- before this version needed one approver; the row hash covers the column
-- only where it differs from 1, so their events still prove them.
ALTER TABLE policy_rules ADD COLUMN approvers INTEGER NOT NULL DEFAULT 1 CHECK(approvers BETWEEN 1 AND 9);
ALTER TABLE policy_evals ADD COLUMN approvers INTEGER NOT NULL DEFAULT 1 CHECK(approvers BETWEEN 1 AND 9);

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

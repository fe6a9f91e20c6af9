-- Schema 19: the service's identities (issue 44, SPEC 12).
--
-- An agent reaching `tollgate serve` over TCP is the holder of a bearer
-- token an operator made (`tollgate agents token create NAME`). Each
-- token's creation and its revocation are facts like an operator change:
-- a row committed by its event on the hash chain and, on a signed ledger,
-- signed by the operator who made it, so verify proves them and a row
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
CREATE TRIGGER agent_tokens_no_update BEFORE UPDATE ON agent_tokens
BEGIN SELECT RAISE(ABORT, 'agent_tokens is append-only'); END;
CREATE TRIGGER agent_tokens_no_delete BEFORE DELETE ON agent_tokens
BEGIN SELECT RAISE(ABORT, 'agent_tokens is append-only'); END;
CREATE TRIGGER agent_tokens_no_replace BEFORE INSERT ON agent_tokens
WHEN EXISTS (SELECT 1 FROM agent_tokens WHERE id = NEW.id OR (token_id = NEW.token_id AND action = NEW.action))
BEGIN SELECT RAISE(ABORT, 'agent_tokens is append-only: a row is never replaced'); END;

-- The names a service principal (a token's name, or the Unix user a
-- socket's peer logs in as) may act as besides its own, each allowed or
-- withdrawn by an operator: the newest row for a pair says which.
-- PostgreSQL's login roles keep their own map (schema 28 there); this
-- is the service's, on both engines.
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
CREATE TRIGGER principal_names_no_update BEFORE UPDATE ON principal_names
BEGIN SELECT RAISE(ABORT, 'principal_names is append-only'); END;
CREATE TRIGGER principal_names_no_delete BEFORE DELETE ON principal_names
BEGIN SELECT RAISE(ABORT, 'principal_names is append-only'); END;
CREATE TRIGGER principal_names_no_replace BEFORE INSERT ON principal_names
WHEN EXISTS (SELECT 1 FROM principal_names WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'principal_names is append-only: a row is never replaced'); END;

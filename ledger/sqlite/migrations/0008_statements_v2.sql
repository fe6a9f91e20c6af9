-- Signed statements bound to their place (schema 8).
--
-- From this version every signed statement names what makes its fact
-- unique where it stands (the rule it replaces, the epoch or operator
-- change before it): a signed row copied elsewhere no longer verifies.
-- Statements of version 1 keep verifying for the facts committed before
-- the upgrade (the state machine's step appends the marker event that
-- says where they end). A signature counts once: the same signature on
-- two rows is refused here, and verify names it on a file edited by hand.
CREATE UNIQUE INDEX signatures_once ON signatures(signature);

-- Policy over context (SPEC 10). A rule may carry a CEL condition and a
-- priority (a rule is its pattern and condition: setting the pair again
-- replaces it); an evaluation keeps what it read, to explain itself; an
-- intent keeps the context it was guarded with, bound to its key by its
-- own digest, which the answer index carries so that an identical retry
-- is still one index read and a changed context is still a conflict.
ALTER TABLE policy_rules ADD COLUMN condition TEXT NOT NULL DEFAULT '' CHECK(length(condition) <= 2000);
ALTER TABLE policy_rules ADD COLUMN priority INTEGER NOT NULL DEFAULT 0 CHECK(priority BETWEEN -1000 AND 1000);
ALTER TABLE policy_evals ADD COLUMN explain TEXT NOT NULL DEFAULT '';
ALTER TABLE payloads ADD COLUMN context_sha256 TEXT NOT NULL DEFAULT ''
    CHECK(context_sha256 = '' OR (length(context_sha256) = 64 AND context_sha256 NOT GLOB '*[^0-9a-f]*'));
ALTER TABLE payloads ADD COLUMN context TEXT NOT NULL DEFAULT '' CHECK(length(context) <= 8192);
ALTER TABLE action_index ADD COLUMN context_sha256 TEXT NOT NULL DEFAULT '';
DROP INDEX action_index_answer;
CREATE INDEX action_index_answer ON action_index(action_key,
    payload_sha256 || stage || ' ' || deadline_ms || ' ' || (retained + 2 * redacted) || context_sha256 || ' ' || agent);

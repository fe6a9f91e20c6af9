-- An identical retry, the most common call, needs one key's answer: its
-- digest, stage, deadline, flags and agent. This index keeps that answer
-- as one value beside the key, so the lookup is one b-tree search that
-- never visits the table and hands back one column. The expression must
-- stay identical to fastCols in state.go, or SQLite evaluates it from the
-- table instead (a test checks the query plan). It costs about 9% more
-- file on a ledger whose payloads are retained.
CREATE INDEX action_index_answer ON action_index(action_key,
    payload_sha256 || stage || ' ' || deadline_ms || ' ' || (retained + 2 * redacted) || agent);

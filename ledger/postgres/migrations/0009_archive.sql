-- Retention (schema 9, SPEC 11); see the SQLite migration of the same
-- number. The tables exist here so that the state machine's reads are the
-- same on both engines; archive itself runs on SQLite ledgers only (an
-- archive is a ledger file).
CREATE TABLE archives (
    id                BIGINT PRIMARY KEY,
    file              TEXT COLLATE "C" NOT NULL CHECK (length(file) BETWEEN 1 AND 4096),
    ledger_id         TEXT COLLATE "C" NOT NULL,
    through_seq       BIGINT NOT NULL CHECK (through_seq >= 0),
    through_hash      TEXT COLLATE "C" NOT NULL CHECK (through_hash ~ '^[0-9a-f]{64}$'),
    head_seq          BIGINT NOT NULL,
    head_hash         TEXT COLLATE "C" NOT NULL CHECK (head_hash ~ '^[0-9a-f]{64}$'),
    keys              BIGINT NOT NULL CHECK (keys >= 0),
    keys_sha256       TEXT COLLATE "C" NOT NULL CHECK (keys_sha256 ~ '^[0-9a-f]{64}$'),
    spans             BIGINT NOT NULL CHECK (spans >= 0),
    spans_sha256      TEXT COLLATE "C" NOT NULL CHECK (spans_sha256 ~ '^[0-9a-f]{64}$'),
    settled_before_ms BIGINT NOT NULL,
    operator          TEXT COLLATE "C" NOT NULL,
    at_ms             BIGINT NOT NULL
);
CREATE TABLE archived_keys (
    action_key     TEXT COLLATE "C" PRIMARY KEY,
    archive_id     BIGINT NOT NULL,
    state          TEXT COLLATE "C" NOT NULL CHECK (state IN ('denied','rejected','expired','succeeded','failed','reconciled')),
    result         TEXT COLLATE "C" NOT NULL DEFAULT '' CHECK (result IN ('','executed','not-executed')),
    context_sha256 TEXT COLLATE "C" NOT NULL DEFAULT '' CHECK (context_sha256 = '' OR context_sha256 ~ '^[0-9a-f]{64}$')
);
CREATE TABLE pruned_events (
    first_seq  BIGINT PRIMARY KEY,
    last_seq   BIGINT NOT NULL UNIQUE CHECK (last_seq >= first_seq),
    first_prev TEXT COLLATE "C" NOT NULL CHECK (first_prev ~ '^[0-9a-f]{64}$'),
    last_hash  TEXT COLLATE "C" NOT NULL CHECK (last_hash ~ '^[0-9a-f]{64}$'),
    archive_id BIGINT NOT NULL
);
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['archives', 'archived_keys', 'pruned_events'] LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION tollgate_append_only()', t || '_append_only', t);
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION tollgate_append_only()', t || '_no_truncate', t);
    END LOOP;
END $$;
GRANT SELECT ON archives, archived_keys, pruned_events TO tollgate_agent, tollgate_operator;

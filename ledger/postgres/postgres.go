// Package postgres is tollgate's storage engine for agents and operators
// on many hosts (SPEC 8): a PostgreSQL 15+ database through pgx. It
// implements engine.Engine; the state machine in package ledger runs on
// it unchanged. What is PostgreSQL's own lives here: the schema and its
// roles, placeholders, SQLSTATE codes, the row lock on the chain head,
// the database's clock and the watch.
//
// Concurrency: every writing transaction runs under READ COMMITTED and
// first locks the one chain_head row (SELECT ... FOR UPDATE), so writers
// on any number of hosts are ordered, events are numbered in commit
// order, and what a transaction read about a key cannot change before it
// commits. Unique constraints hold the invariants whatever a client does;
// the roles tollgate_agent and tollgate_operator, not the client, decide
// who may write a decision.
package postgres

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// The schema is defined once, in files organised by what they define
// (schema/10_schemas.sql: roles and schemas; 20_tables.sql; 30_views.sql;
// 40_functions.sql; 50_triggers.sql; 60_grants.sql), run in the order of
// their names in one transaction on an empty database.
//
//go:embed schema/*.sql
var schemaFS embed.FS

// Migrations above the baseline, NNNN_what.sql (migrations/README.md).
//
//go:embed migrations
var migrationFS embed.FS

// DevLast is the last development schema (before the first release): a
// ledger at it is carried to the baseline. Any other schema below
// engine.Baseline is refused.
const DevLast = 42

// Options configures Open.
type Options struct {
	// ReadOnly runs every transaction READ ONLY and never migrates.
	ReadOnly bool
	// Existing refuses a database that has no ledger yet instead of
	// creating one (commands that read before they write).
	Existing bool
	// After is the state machine's step of a migration that needs one.
	After engine.Migration
	// Empty requires a database with no ledger yet, whose schema it
	// creates: the target of a copy from another ledger, which brings
	// its own identity and events (After is then not called).
	Empty bool
	// Tracer, when set, sees every statement the engine's pool sends
	// (pgx's QueryTracer, and its PrepareTracer when it is one): a test
	// counts the round trips of a call with it.
	Tracer pgx.QueryTracer
}

// Engine is an open PostgreSQL ledger.
type Engine struct {
	cfg      *pgx.ConnConfig // for the watch's own connection
	db       *sql.DB
	location string
	ro       bool
	// guardFn is set when the schema has tollgate_guard (version 14),
	// reportFn when it has tollgate_report (version 19), recordFn when it
	// has tollgate_record (version 24), flushFn when it has tollgate_flush
	// (version 33).
	guardFn, reportFn, recordFn, flushFn bool
}

var _ engine.Engine = (*Engine)(nil)

// maxConns bounds an engine's connections to the database.
const maxConns = 8

// IsURL reports whether a --db value names a PostgreSQL ledger: a
// postgres:// or postgresql:// URL.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database dsn names (a libpq URL) and, unless
// read-only, creates or upgrades the ledger's schema in it.
func Open(ctx context.Context, dsn string, opt Options) (*Engine, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: ledger URL: %v", engine.ErrInvalidInput, redactErr(err))
	}
	pool := cfg.Copy()
	if opt.Tracer != nil {
		pool.Tracer = opt.Tracer
	}
	c := connector{Connector: stdlib.GetConnector(*pool), detect: !namesExecMode(dsn)}
	e := &Engine{cfg: cfg, db: sql.OpenDB(c), location: Redact(dsn), ro: opt.ReadOnly}
	// Every connection the pool opens is kept while it is used within a
	// minute: a new one costs a TLS handshake and SCRAM's hashing on both
	// sides (tens of milliseconds on a busy host, measured at 180 ms),
	// which database/sql's default of two idle connections made a server
	// with eight callers in flight pay on most calls.
	e.db.SetMaxOpenConns(maxConns)
	e.db.SetMaxIdleConns(maxConns)
	e.db.SetConnMaxIdleTime(time.Minute)
	if err := e.prepare(ctx, opt); err != nil {
		e.db.Close()
		return nil, err
	}
	return e, nil
}

// namesExecMode reports whether dsn chooses pgx's query execution mode
// itself (default_query_exec_mode), which Open then leaves alone.
func namesExecMode(dsn string) bool { return strings.Contains(dsn, "default_query_exec_mode") }

// Redact is dsn without its password, for messages and Location.
func Redact(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "postgres://(unparsable)"
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// redactErr keeps a parse error's kind without echoing the URL, which
// may hold a password.
func redactErr(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return "cannot parse the connection string"
	}
	return "invalid connection string"
}

// prepare reads the schema version and creates or migrates when allowed.
func (e *Engine) prepare(ctx context.Context, opt Options) error {
	version, err := e.version(ctx)
	if err != nil {
		return fmt.Errorf("open ledger %s: %w", e.location, e.MapError(err))
	}
	last := schemaVersion()
	if opt.Empty {
		if version != 0 {
			return fmt.Errorf("%w: %s already holds a ledger (schema version %d); a copy goes into an empty database", engine.ErrInvalidInput, e.location, version)
		}
		opt.After = nil
	}
	switch {
	case version > last:
		return fmt.Errorf("%w: ledger %s has schema version %d, this build knows up to %d", engine.ErrNewerSchema, e.location, version, last)
	case version > 0 && version < engine.Baseline && version != DevLast:
		return fmt.Errorf("%w: ledger %s has schema version %d; this build carries forward only the last development schema (%d) and the released ones (%d and later): "+
			"migrate it with a tollgate build of schema %d first, as the schema's owner, or copy an SQLite ledger into an empty database with 'tollgate migrate --from'",
			engine.ErrDevelopmentSchema, e.location, version, DevLast, engine.Baseline, DevLast)
	case version == last:
		e.guardFn, e.reportFn, e.recordFn, e.flushFn = true, true, true, true
		return nil
	case version == 0 && (opt.ReadOnly || opt.Existing):
		return fmt.Errorf("%w: no ledger in %s (a reading command never creates one); run 'tollgate migrate' as the schema's owner", engine.ErrNoLedger, e.location)
	case opt.ReadOnly || opt.Existing:
		return fmt.Errorf("%w: ledger %s has schema version %d, this build reads %d; run 'tollgate migrate' as the schema's owner",
			engine.ErrNeedsMigration, e.location, version, last)
	}
	if err := e.migrate(ctx, opt.After); err != nil {
		if errors.Is(err, engine.ErrNotPermitted) {
			return fmt.Errorf("open ledger %s: %w: the schema is at version %d and this role cannot migrate it; run 'tollgate migrate' as the schema's owner",
				e.location, engine.ErrNotPermitted, version)
		}
		return fmt.Errorf("open ledger %s: %w", e.location, err)
	}
	e.guardFn, e.reportFn, e.recordFn, e.flushFn = true, true, true, true
	return nil
}

// version is the ledger's schema version, 0 when the database has none.
// A database with other tables but no version table is someone else's.
func (e *Engine) version(ctx context.Context) (int, error) {
	var has bool
	var others int
	err := e.db.QueryRowContext(ctx, `SELECT to_regclass('public.tollgate_schema') IS NOT NULL,
		(SELECT count(*) FROM pg_tables WHERE schemaname = 'public')`).Scan(&has, &others)
	if err != nil {
		return 0, err
	}
	if !has {
		if others > 0 {
			return 0, fmt.Errorf("%w: database %s holds %d tables of another application and no tollgate schema; it was left as it is", engine.ErrNotLedger, e.location, others)
		}
		return 0, nil
	}
	var v int
	err = e.db.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM tollgate_schema").Scan(&v)
	return v, err
}

func migrations() ([]engine.Step, error) { return engine.Steps(migrationFS, "migrations") }

// schemaVersion is the version this build writes.
var schemaVersion = sync.OnceValue(func() int {
	ms, _ := migrations()
	return engine.Current(ms)
})

// SchemaSQL is the definition files' SQL, in the order they run.
func SchemaSQL() (string, error) {
	ents, err := fs.ReadDir(schemaFS, "schema")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, ent := range ents { // in the order of their names
		s, err := fs.ReadFile(schemaFS, "schema/"+ent.Name())
		if err != nil {
			return "", err
		}
		b.Write(s)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// migrationLock is the advisory lock that orders migrators: two
// processes opening an old ledger at once apply each step once.
const migrationLock = 0x546c6774

// migrate brings the database to this build's schema: an empty one gets
// the definition files, a ledger at the last development schema is
// carried to the baseline, and then each migration above the stored
// version runs, each in one transaction with the version row it writes.
func (e *Engine) migrate(ctx context.Context, after engine.Migration) error {
	if err := e.retry(ctx, func() error { return e.baseline(ctx, after) }); err != nil {
		return err
	}
	migs, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range migs {
		err := e.retry(ctx, func() error { return e.migrateOne(ctx, m, after) })
		if err != nil {
			return err
		}
	}
	return nil
}

// baseline, in one transaction under the migration lock, creates the
// schema from the definition files in an empty database, or carries a
// ledger at DevLast to the baseline: its tables, functions, triggers and
// grants are already the baseline's (TestPostgresDevLastCarriedToBaseline
// compares them), so the step keeps every row and its head and records
// the version, after the state machine's step (after) has made its own
// definitions anew. A database already at the baseline or later is left
// alone.
func (e *Engine) baseline(ctx context.Context, after engine.Migration) error {
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
		return err
	}
	var has bool
	if err := tx.QueryRowContext(ctx, "SELECT to_regclass('public.tollgate_schema') IS NOT NULL").Scan(&has); err != nil {
		return err
	}
	var v int
	if has {
		if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM tollgate_schema").Scan(&v); err != nil {
			return err
		}
	}
	// A new ledger is made from the definition files, which are the
	// current schema: it starts at this build's version and no forward
	// migration runs on it. A ledger at DevLast is carried to the
	// baseline, and the forward migrations then run on it.
	version := engine.Baseline
	switch {
	case v >= engine.Baseline:
		return nil
	case v == 0:
		version = schemaVersion()
		body, err := SchemaSQL()
		if err != nil {
			return err
		}
		// Function bodies refer to tables made after them.
		if _, err := tx.ExecContext(ctx, "SET LOCAL check_function_bodies = false"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, body); err != nil {
			return fmt.Errorf("schema: %w", e.MapError(err))
		}
	case v != DevLast:
		return fmt.Errorf("%w: ledger %s has schema version %d", engine.ErrDevelopmentSchema, e.location, v)
	}
	if after != nil {
		if err := after(ctx, tx, version); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO tollgate_schema(version) VALUES ($1)", version); err != nil {
		return err
	}
	return tx.Commit()
}

func (e *Engine) migrateOne(ctx context.Context, m engine.Step, after engine.Migration) error {
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
		return err
	}
	var v int
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM tollgate_schema").Scan(&v); err != nil {
		return err
	}
	if last := schemaVersion(); v > last {
		return fmt.Errorf("%w: database has version %d, this build knows up to %d", engine.ErrNewerSchema, v, last)
	}
	if v >= m.Version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, e.MapError(err))
	}
	if after != nil {
		if err := after(ctx, tx, m.Version); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO tollgate_schema(version) VALUES ($1)", m.Version); err != nil {
		return err
	}
	return tx.Commit()
}

// retry runs once again while a retry can clear its failure, until ctx
// ends.
func (e *Engine) retry(ctx context.Context, once func() error) error {
	return engine.Retry(ctx, e, once)
}

// privateTables are the tables schema 10 keeps where no role but the
// owner reaches them, each behind a view of its name in public that
// hides another role's payload bodies, and from schema 42 its targets
// (action_index).
var privateTables = map[string]bool{"payloads": true, "conflicts": true, "action_index": true}

// Table is the table that stores the rows of name, for the owner's
// writes that bypass the insert functions (a copy from another ledger):
// a view's base table, or name itself.
func Table(name string) string {
	if privateTables[name] {
		return "tollgate_private." + name
	}
	return name
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return "postgres" }

// LoginRole implements engine.LoginRoler: the user the connection string
// names (or pgx's default, the OS user), which is what session_user reads
// in every session this engine opens, pgbouncer's included.
func (e *Engine) LoginRole() string { return e.cfg.User }

// Location implements engine.Engine: the URL without its password.
func (e *Engine) Location() string { return e.location }

// Writer implements engine.Engine; nil when read-only.
func (e *Engine) Writer() *sql.DB {
	if e.ro {
		return nil
	}
	return e.db
}

// Reader implements engine.Engine: the same pool, read-only transactions.
func (e *Engine) Reader() *sql.DB { return e.db }

// SchemaVersion implements engine.Engine.
func (e *Engine) SchemaVersion() int { return schemaVersion() }

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return schemaVersion() }

// Close implements engine.Engine.
func (e *Engine) Close() error { return e.db.Close() }

// Rebind implements engine.Engine: ? becomes $1, $2, ... outside quoted
// literals and identifiers.
func (e *Engine) Rebind(q string) string { return Rebind(q) }

// Rebind rewrites q's ? placeholders as PostgreSQL's $1, $2, ...
func Rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// LockSuffix implements engine.Engine: a row lock held to commit.
func (e *Engine) LockSuffix() string { return " FOR UPDATE" }

// WriteTurn implements engine.Engine: the chain head's row lock already
// queues writers in the server, which wakes the next at once.
func (e *Engine) WriteTurn(context.Context) (func(), error) { return func() {}, nil }

// IndexedBy implements engine.Engine: PostgreSQL's planner takes no
// index hint.
func (e *Engine) IndexedBy(string) string { return "" }

// RowCount implements engine.Engine: a sequence keeps no id a rolled
// back insert took, so ids have gaps and only count(*) counts.
func (e *Engine) RowCount(table string) string { return "(SELECT count(*) FROM " + table + ")" }

// Clock implements engine.Engine: the database's clock, so that hosts
// whose clocks disagree judge deadlines and leases alike.
func (e *Engine) Clock(ctx context.Context, tx *sql.Tx) (time.Time, error) {
	var ms int64
	if err := tx.QueryRowContext(ctx, "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint").Scan(&ms); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(ms).UTC(), nil
}

// LockKey implements engine.KeyLocker with the schema's
// tollgate_lock_key (schema 11), in one round trip. From schema 29 the
// function does not lock a key another database role recorded when the
// caller is an agent's role: it answers NULL, holding the ledger-wide
// gate only, and LockKey then reads the clock and answers
// engine.ErrOthersKey beside it, the transaction still usable.
func (e *Engine) LockKey(ctx context.Context, tx *sql.Tx, key string) (time.Time, error) {
	var ms sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT tollgate_lock_key($1)", key).Scan(&ms); err != nil {
		return time.Time{}, err
	}
	if !ms.Valid {
		t, err := e.Clock(ctx, tx)
		if err != nil {
			return time.Time{}, err
		}
		return t, engine.ErrOthersKey
	}
	return time.UnixMilli(ms.Int64).UTC(), nil
}

// guardSQL is a guard's one round trip: the key's projection row when it
// has one (an identical retry's answer, read as the fast path reads it,
// by its primary key; with the active epoch when the key is pending,
// which decides whether its request can still be answered from the
// row), and tollgate_guard's answer, in autocommit, only when it has
// none: a CASE evaluates its branch only when taken, so the call is never
// made for a key that has a row. The call's results come back as one
// JSON object, decoded only when it was made: a function scan, or eleven
// result columns, cost a retry a fifth of its time.
// retryGuardSQL calls the function whatever the row, for an attempt after
// one whose answer was lost: the function recognises the call's own
// permit and makes the answer wait for the ledger's replicas.
//
// A call that carries an attempt's digest ($14, NULL for none) calls the
// function also for a key whose row says executing (guardCalls): the
// function gives a retry of that attempt its permit (schema 101), which
// the row cannot tell. Every other key with a row is answered from it,
// the attempt's digest notwithstanding.
//
// A redacted call's canonical text goes as the last parameter, which
// guardCanonical hands to the database in the transaction-local setting
// tollgate.redacted_text just before the function runs (schema 41: the
// payload row's trigger hashes it and binds the row's kind and digests to
// the payload digest; nothing stores it), and the function's own
// canonical argument is NULL, as a redacted call's always was.
const (
	guardCalls = `(x.answer IS NULL OR x.stage = 'executing' AND $14::text IS NOT NULL)`
	guardSQL   = `SELECT CASE WHEN NOT ` + guardCalls + ` THEN x.answer END, CASE WHEN x.stage = 'pending' THEN coalesce((SELECT epoch FROM epochs ORDER BY seq DESC LIMIT 1), '') END,
	CASE WHEN ` + guardCalls + ` THEN to_json(tollgate_guard($1, $2, ` + guardCanonical + `, $4, $5, $6, $7, $8, $9, $10, $11, false, $12, $14))::text END
	FROM (SELECT $1::text AS k) a LEFT JOIN action_index x ON x.action_key = a.k`
	retryGuardSQL = `SELECT NULL::text, NULL::text, to_json(tollgate_guard($1, $2, ` + guardCanonical + `, $4, $5, $6, $7, $8, $9, $10, $11, true, $12, $14::text))::text`
)

// guardCanonical and recordCanonical are the SQL of a one-call
// function's canonical argument: the parameter $3 when the last
// parameter, the redacted text, is NULL (a payload kept whole), else NULL
// once that text is set as tollgate.redacted_text. The setting is made
// inside the argument, so it is in place before the function is called,
// in the same statement and transaction.
const (
	guardCanonical  = "CASE WHEN $13::text IS NULL THEN $3::text ELSE nullif(set_config('tollgate.redacted_text', $13, true), $13) END"
	recordCanonical = "CASE WHEN $11::text IS NULL THEN $3::text ELSE nullif(set_config('tollgate.redacted_text', $11, true), $11) END"
)

// guardResult is tollgate_guard's OUT parameters as to_json writes them.
type guardResult struct {
	Path      string `json:"o_path"`
	Answer    string `json:"o_answer"`
	Now       int64  `json:"o_now"`
	Mode      string `json:"o_mode"`
	Rule      int64  `json:"o_rule"`
	Pattern   string `json:"o_pattern"`
	TTLms     int64  `json:"o_ttl_ms"`
	Approvers int64  `json:"o_approvers"`
	PermitID  string `json:"o_permit_id"`
	LeaseMS   int64  `json:"o_lease_ms"`
	ExpiresMS int64  `json:"o_expires_ms"`
	// Unsealed is the call's last pending event when it found the chain
	// head taken (schema 16), nil when its events are in the chain.
	Unsealed *int64 `json:"o_unsealed"`
	// Agent is the agent an attempt's permit was issued to (path
	// attempt, schema 101).
	Agent string `json:"o_agent"`
}

// ServerGuard implements engine.ServerGuard with tollgate_guard, which
// also stores and replays a call's attempt (schema 101).
func (e *Engine) ServerGuard(ctx context.Context, c engine.GuardCall) (engine.GuardReply, bool, error) {
	if !e.guardFn || e.ro {
		return engine.GuardReply{}, false, nil
	}
	q := guardSQL
	if c.Retry {
		q = retryGuardSQL
	}
	r, err := e.keyCall(ctx, q, "tollgate_guard", func(canonical, redacted *string, waitMS int64) []any {
		args := []any{c.Key, c.SHA256, canonical, c.Kind, c.Target, c.BodySHA256, c.Agent, c.ContextSHA256, c.Context, c.LeaseMS, c.PermitID, waitMS, redacted}
		var attempt *string
		if c.AttemptSHA256 != "" {
			attempt = &c.AttemptSHA256
		}
		return append(args, attempt)
	}, c)
	return r, true, err
}

// recordSQL is a record's one round trip, as guardSQL is a guard's: the
// key's projection row when it has one, else tollgate_record's answer.
// retryRecordSQL calls the function whatever the row: after an attempt
// whose answer was lost it finds the key recorded and leaves it to the
// client's path, whose key transaction waits for the ledger's replicas.
const (
	recordSQL = `SELECT x.answer, NULL::text,
	CASE WHEN x.answer IS NULL THEN to_json(tollgate_record($1, $2, ` + recordCanonical + `, $4, $5, $6, $7, $8, $9, $10))::text END
	FROM (SELECT $1::text AS k) a LEFT JOIN action_index x ON x.action_key = a.k`
	retryRecordSQL = `SELECT NULL::text, NULL::text, to_json(tollgate_record($1, $2, ` + recordCanonical + `, $4, $5, $6, $7, $8, $9, $10))::text`
)

// FlushSQL implements engine.OneCallFlusher with tollgate_flush (schema
// 33).
func (e *Engine) FlushSQL() string {
	if !e.flushFn {
		return ""
	}
	return "SELECT o_seq, o_hash FROM tollgate_flush(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
}

// ServerRecord implements engine.ServerRecord with tollgate_record
// (schema 24).
func (e *Engine) ServerRecord(ctx context.Context, c engine.GuardCall) (engine.GuardReply, bool, error) {
	if !e.recordFn || e.ro {
		return engine.GuardReply{}, false, nil
	}
	q := recordSQL
	if c.Retry {
		q = retryRecordSQL
	}
	r, err := e.keyCall(ctx, q, "tollgate_record", func(canonical, redacted *string, waitMS int64) []any {
		return []any{c.Key, c.SHA256, canonical, c.Kind, c.Target, c.BodySHA256, c.Agent, c.ContextSHA256, c.Context, waitMS, redacted}
	}, c)
	return r, true, err
}

// keyCall sends q, a one-call guard or record (guardSQL's three columns:
// the key's projection answer, the active epoch, the function's answer
// as JSON), with the arguments args makes from the call's canonical text
// (NULL when redacted), the redacted text (NULL when not: guardCanonical)
// and its lock bound; fn names the function in errors. Events the call
// left pending are sealed after its commit.
func (e *Engine) keyCall(ctx context.Context, q, fn string, args func(canonical, redacted *string, waitMS int64) []any, c engine.GuardCall) (engine.GuardReply, error) {
	var r engine.GuardReply
	canonical, redacted := &c.Canonical, (*string)(nil)
	if c.Redacted {
		canonical, redacted = nil, &c.Canonical
	}
	conn, waitMS, err := e.callConn(ctx)
	if err != nil {
		return r, err
	}
	defer conn.Close()
	var answer, epoch, called sql.NullString
	err = conn.QueryRowContext(ctx, q, args(canonical, redacted, waitMS)...).Scan(&answer, &epoch, &called)
	switch {
	case err != nil:
		return r, err
	case answer.Valid:
		r.Path, r.Answer = engine.GuardIndex, answer.String
		r.ActiveEpoch, r.EpochRead = epoch.String, epoch.Valid
		return r, nil
	}
	var g guardResult
	if err := json.Unmarshal([]byte(called.String), &g); err != nil {
		return r, fmt.Errorf("%s's answer: %w", fn, err)
	}
	r = engine.GuardReply{Path: engine.GuardPath(g.Path), Answer: g.Answer, Now: g.Now, Mode: g.Mode, RuleID: g.Rule, Pattern: g.Pattern,
		TTLms: g.TTLms, Approvers: g.Approvers, PermitID: g.PermitID, LeaseMS: g.LeaseMS, ExpiresMS: g.ExpiresMS, Agent: g.Agent}
	if g.Unsealed != nil {
		sealAfter(ctx, conn, *g.Unsealed)
	}
	return r, nil
}

// callConn is the connection a one-call function runs on and the bound,
// in ms, on its lock waits (0: none, without a deadline). The connection
// comes first: making one (TLS included) takes part of the attempt's
// time, which the lock's bound must not count on; with too little time
// left nothing is sent (engine.ErrNotSent).
func (e *Engine) callConn(ctx context.Context) (*sql.Conn, int64, error) {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: no connection: %w", engine.ErrNotSent, err)
	}
	var waitMS int64
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		wait := left - min(left/3, 250*time.Millisecond)
		if wait < minLockWait {
			conn.Close()
			return nil, 0, fmt.Errorf("%w: %s left of the attempt, too little to wait for a lock", engine.ErrNotSent, left.Round(time.Millisecond))
		}
		waitMS = wait.Milliseconds()
	}
	return conn, waitMS, nil
}

// reportResult is tollgate_report's OUT parameters as to_json writes them.
type reportResult struct {
	Path string `json:"o_path"`
	Now  int64  `json:"o_now"`
	// Unsealed is the report's pending event when it found the chain head
	// taken, nil when its event is in the chain.
	Unsealed *int64 `json:"o_unsealed"`
}

// ServerReport implements engine.ServerReport with tollgate_report
// (schema 19).
func (e *Engine) ServerReport(ctx context.Context, c engine.ReportCall) (engine.ReportReply, bool, error) {
	var r engine.ReportReply
	if !e.reportFn || e.ro {
		return r, false, nil
	}
	conn, waitMS, err := e.callConn(ctx)
	if err != nil {
		return r, true, err
	}
	defer conn.Close()
	var called string
	err = conn.QueryRowContext(ctx, "SELECT to_json(tollgate_report($1, $2, $3, $4, $5, $6, $7))::text",
		c.Key, c.PermitID, c.Outcome, c.Ref, c.LatencyMS, c.Result, waitMS).Scan(&called)
	if err != nil {
		return r, true, err
	}
	var g reportResult
	if err := json.Unmarshal([]byte(called), &g); err != nil {
		return r, true, fmt.Errorf("tollgate_report's answer: %w", err)
	}
	if g.Unsealed != nil {
		sealAfter(ctx, conn, *g.Unsealed)
	}
	return engine.ReportReply{Done: g.Path == "new", Now: g.Now}, true, nil
}

// maxSealWait bounds a guard's wait for the chain head after its commit:
// a role that holds the head delays the guard by this much at most.
const maxSealWait = time.Second

// sealAfter seals a committed guard's pending events (schema 16) when
// the guard found the chain head taken: one more call, after the commit,
// which returns at once if the head's holder sealed them meanwhile. The
// guard's answer is committed whatever this does: a head held past the
// attempt's time leaves the events pending, checked by verify, for the
// next holder of the head to seal, so its error is not the caller's.
func sealAfter(ctx context.Context, conn *sql.Conn, through int64) {
	waitMS := maxSealWait.Milliseconds()
	if d, ok := ctx.Deadline(); ok {
		waitMS = min(waitMS, time.Until(d).Milliseconds()/2)
		if waitMS < 1 {
			return
		}
	}
	var n int64
	_ = conn.QueryRowContext(ctx, "SELECT tollgate_seal($1, $2)", through, waitMS).Scan(&n)
}

// minLockWait is the shortest lock wait worth sending a guard for: with
// less, the database's answer that it gave up could not reach the client
// before the client gives up, which would leave the commit unknown.
const minLockWait = 50 * time.Millisecond

// SQLSTATE codes the engine maps.
const (
	codeAppendOnly    = "TG001" // raised by the schema's append-only triggers
	codeRefusedFact   = "TG002" // raised where a fact does not follow from the ledger's facts and rules (schema 11)
	codeNoPrivilege   = "42501"
	codeSerialization = "40001"
	codeDeadlock      = "40P01"
	codeLockNotAvail  = "55P03"
	codeReadOnlyTx    = "25006"
	codeDiskFull      = "53100"
	codeBadEncoding   = "22021" // text cannot hold U+0000
	codeAdminShutdown = "57P01"
	codeCrashShutdown = "57P02"
	codeCannotConnect = "57P03"
)

// MapError implements engine.Engine by SQLSTATE.
func (e *Engine) MapError(err error) error {
	var pe *pgconn.PgError
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	switch pe.Code {
	case codeAppendOnly:
		return fmt.Errorf("%w: %s", engine.ErrAppendOnly, pe.Message)
	case codeRefusedFact:
		return fmt.Errorf("%w: the database refused a fact its rules do not allow: %s", engine.ErrNotPermitted, pe.Message)
	case codeNoPrivilege:
		return fmt.Errorf("%w: the database refused this role: %s", engine.ErrNotPermitted, pe.Message)
	case codeSerialization, codeDeadlock, codeLockNotAvail:
		return fmt.Errorf("%w: %s", engine.ErrBusy, pe.Message)
	case codeBadEncoding:
		return fmt.Errorf("%w: PostgreSQL text cannot hold U+0000 (NUL), so a PostgreSQL ledger refuses it in kind, target and agent (%s)", engine.ErrInvalidInput, pe.Message)
	case codeReadOnlyTx, codeDiskFull:
		return fmt.Errorf("%w: %s", engine.ErrReadOnly, pe.Message)
	}
	return err
}

// Retryable implements engine.Engine: serialization failures, deadlocks,
// a lock not available, a server shutting the session down, a lost
// connection. Every write is idempotent, so running it again after a
// commit whose answer was lost only replays it.
func (e *Engine) Retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeSerialization, codeDeadlock, codeLockNotAvail, codeAdminShutdown, codeCrashShutdown, codeCannotConnect:
			return true
		}
		return strings.HasPrefix(pe.Code, "08") // connection exception
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		pgconn.SafeToRetry(err) || errors.As(err, &ne) || isClosedConn(err)
}

// isClosedConn recognises pgx's error for a connection the server
// terminated mid-transaction, which it reports without a code.
func isClosedConn(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "conn closed") || strings.Contains(s, "unexpected EOF") || strings.Contains(s, "connection reset")
}

// Integrity implements engine.Engine. PostgreSQL keeps its own pages
// (checksums, WAL); what tollgate can prove is the chain and the facts,
// which verify does on every engine. Proving a payload row takes its
// body, and schema 10 hides the bodies another role wrote from an agent's
// role: verify would see them as NULL and name sound rows as changed, so
// such a role is refused here, by name, before verify reads a fact.
func (e *Engine) Integrity(ctx context.Context, tx *sql.Tx) (string, error) {
	var hidden int64
	if err := tx.QueryRowContext(ctx, hiddenBodies).Scan(&hidden); err != nil {
		return "", err
	}
	if hidden > 0 {
		return "", fmt.Errorf("%w: %d payload bodies were written by other database roles and are hidden from this one; "+
			"verify proves every fact from its body, so run it as an operator's role or the schema's owner", engine.ErrNotPermitted, hidden)
	}
	return "ok", nil
}

// hiddenBodies counts the bodies the views of schema 10 hide from this
// session: a body that is not redacted reads as NULL only there.
const hiddenBodies = `SELECT CASE WHEN tollgate_sees_bodies() THEN 0 ELSE
	(SELECT count(*) FROM payloads WHERE canonical IS NULL AND redacted = 0) +
	(SELECT count(*) FROM conflicts WHERE attempted IS NULL AND redacted = 0) END`

// Backup implements engine.Engine by refusing: pg_dump makes a
// consistent copy of a PostgreSQL ledger, and tollgate verify proves it.
func (e *Engine) Backup(ctx context.Context, dest string) error {
	return fmt.Errorf("%w: a PostgreSQL ledger is backed up with pg_dump (then 'tollgate verify' on the restored copy), not 'tollgate backup'", engine.ErrInvalidInput)
}

// Watch implements engine.Engine with LISTEN on the channel the events
// trigger notifies at each commit (payload: the key only), on a
// connection of its own, and polls the chain head's sequence (one indexed
// row) whenever it is not sure to be told.
//
// It is not sure until a notification it sent itself, on a channel of its
// own through the pool, has arrived: behind a pooler in transaction mode
// (pgbouncer) LISTEN runs in whichever server session the statement got,
// which then serves other clients while the watch's connection hears
// nothing, so a watch that trusted LISTEN there would never wake. The
// probe fails there, and the watch polls for good. It polls too while
// the probe is in flight and once the listening connection is lost.
func (e *Engine) Watch(ctx context.Context) (engine.Watch, error) {
	w := &watch{db: e.db, last: -1, done: make(chan struct{}), probed: make(chan struct{})}
	conn, err := pgx.ConnectConfig(ctx, e.cfg.Copy())
	if err != nil {
		close(w.probed)
		close(w.done) // polling only
		return w, nil
	}
	lctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.listen(lctx, conn)
	return w, nil
}

// probeWait bounds the wait for the watch's own notification: on a
// direct connection it comes back in a round trip or two.
const probeWait = 2 * time.Second

// watch answers Changed from notifications while it listens, and from the
// chain head's sequence otherwise.
type watch struct {
	db        *sql.DB
	mu        sync.Mutex
	last      int64
	listening atomic.Bool
	dirty     atomic.Bool
	notified  atomic.Int64
	cancel    context.CancelFunc
	probed    chan struct{} // closed once the probe has succeeded or failed
	done      chan struct{}
}

func (w *watch) listen(ctx context.Context, conn *pgx.Conn) {
	defer close(w.done)
	defer conn.Close(context.Background())
	ok := w.probe(ctx, conn)
	if ok {
		_, err := conn.Exec(ctx, "LISTEN tollgate")
		ok = err == nil
	}
	if ok {
		// A commit between the last poll and LISTEN was told to no one:
		// report one change, which costs the caller a read.
		w.dirty.Store(true)
		w.listening.Store(true)
	}
	close(w.probed)
	if !ok {
		return
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			w.listening.Store(false)
			return
		}
		if n.Channel == "tollgate" {
			w.notified.Add(1)
			w.dirty.Store(true)
		}
	}
}

// probe listens on a channel of its own, notifies it through the pool
// (another session) and reports whether the notification arrived.
func (w *watch) probe(ctx context.Context, conn *pgx.Conn) bool {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return false
	}
	ch := "tollgate_probe_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
		return false
	}
	if _, err := w.db.ExecContext(ctx, "SELECT pg_notify($1, '')", ch); err != nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	for {
		n, err := conn.WaitForNotification(pctx)
		if err != nil {
			return false
		}
		if n.Channel == ch {
			_, err := conn.Exec(ctx, "UNLISTEN "+ch)
			return err == nil
		}
	}
}

func (w *watch) Changed(ctx context.Context) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last >= 0 && w.listening.Load() {
		return w.dirty.Swap(false), nil
	}
	w.dirty.Store(false)
	var v int64
	if err := w.db.QueryRowContext(ctx, "SELECT seq FROM chain_head WHERE one = 1").Scan(&v); err != nil {
		return false, err
	}
	changed := v != w.last
	w.last = v
	return changed, nil
}

func (w *watch) Close() error {
	if w.cancel != nil {
		w.cancel()
	}
	<-w.done
	return nil
}

// Package engine is the seam between tollgate's state machine (package
// ledger) and a storage engine: the one interface each backend implements,
// in a package of its own as litestream does with its replica clients, and
// the errors every backend reports its failures with.
//
// The seam is drawn at SQL rather than at each fact. Every engine tollgate
// supports speaks the same SQL for facts (INSERT ... ON CONFLICT DO
// NOTHING, RETURNING, unique constraints as the invariants), so the state
// machine's statements are written once, in package ledger, and run on
// whichever engine is open. What an engine supplies is what differs:
// finding or creating a ledger, its schema and migrations, how a
// transaction takes the write order, what its error codes mean, how a
// reader learns of another process's commit, and its own structural check
// and backup. It is a leaf package so that a backend can import it
// without importing the state machine it serves.
package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Engine is one open ledger database. It is safe for concurrent use.
type Engine interface {
	// Name is the engine's name for messages: "sqlite" or "postgres".
	Name() string
	// Location names the ledger in messages: a file path, or a URL with
	// no password.
	Location() string
	// Writer is the pool every write runs on, one transaction at a time
	// per connection; nil when the engine was opened read-only. A
	// transaction begun on it takes the engine's write order: SQLite's
	// BEGIN IMMEDIATE, PostgreSQL's row locks.
	Writer() *sql.DB
	// Reader is the pool reads run on; it never writes.
	Reader() *sql.DB
	// WriteTurn waits, until ctx ends, for this caller's turn to write,
	// before the transaction begins, and returns what gives the turn
	// back after it ends: where the engine's own lock is polled (SQLite's
	// busy handler), a queue that hands it over promptly and fairly.
	WriteTurn(ctx context.Context) (release func(), err error)
	// Rebind rewrites a statement's ? placeholders into the engine's own.
	Rebind(query string) string
	// LockSuffix is what a SELECT of one row appends to hold that row
	// until the transaction ends (the chain head): nothing where a
	// writing transaction already excludes every other writer.
	LockSuffix() string
	// IndexedBy is what a SELECT appends after its table to use the named
	// index where the engine takes such a hint; nothing where it does not.
	IndexedBy(index string) string
	// RowCount is an SQL expression that counts the rows of table, whose
	// integer id only grows and whose rows are never deleted: SQLite's
	// max(id), one index probe, since a rolled-back insert gives its id
	// back; count(*) where sequences leave gaps (PostgreSQL).
	RowCount(table string) string
	// Clock is the engine's own time inside tx, read once per transaction,
	// or the zero time where the process's clock is the ledger's (SQLite:
	// one host). A clock every host shares judges deadlines alike.
	Clock(ctx context.Context, tx *sql.Tx) (time.Time, error)
	// MapError turns a driver error into this package's sentinels,
	// matching codes, never message text; other errors pass unchanged.
	MapError(err error) error
	// Retryable reports a failure that running the whole transaction
	// again can clear: lock contention, a serialization failure, a
	// deadlock, a lost connection. Every write of tollgate is idempotent,
	// so a retry is always safe.
	Retryable(err error) bool
	// Watch opens a watch on another process's commits.
	Watch(ctx context.Context) (Watch, error)
	// Integrity runs the engine's own structural check inside tx and
	// returns "ok" or what it found.
	Integrity(ctx context.Context, tx *sql.Tx) (string, error)
	// Backup writes a consistent copy of the ledger to dest, a path that
	// must not exist yet.
	Backup(ctx context.Context, dest string) error
	// SchemaVersion is the schema version this build writes.
	SchemaVersion() int
	// Close releases every connection.
	Close() error
}

// LoginRoler is an engine whose sessions log in as a database role that
// the database records beside each payload (PostgreSQL): from schema 28
// an agent's name is that role's unless an operator allows it another,
// so a call that names no agent is recorded under the role.
type LoginRoler interface {
	// LoginRole is the role this engine's sessions log in as.
	LoginRole() string
}

// KeyLocker is an engine whose writers need not exclude each other
// (PostgreSQL): a transaction that moves one action locks only its key
// and shares a ledger-wide lock with the others, instead of locking the
// whole ledger (package ledger, Store.writeKey). LockKey takes those
// locks inside tx and returns the engine's clock read after them.
//
// A key another database role recorded is not locked for an agent's role
// (PostgreSQL from schema 29): LockKey then answers the clock and
// ErrOthersKey, and tx may only log a conflict on the key.
type KeyLocker interface {
	LockKey(ctx context.Context, tx *sql.Tx, key string) (time.Time, error)
}

// ServerGuard is an engine that takes the common guard whole in one
// call of its own (PostgreSQL from schema 14, tollgate_guard): an
// identical retry that needs no new step, or a new key on a ledger whose
// trust and rules the database can judge alone, recorded, evaluated and
// permitted, sent for approval or denied in the call's one transaction,
// at the database's time. Anything else it answers GuardFull, having
// written nothing, and the state machine takes its own path. Its second
// result is false, with nothing sent, when the schema has no such call
// (an engine opened at an older version).
type ServerGuard interface {
	ServerGuard(ctx context.Context, c GuardCall) (GuardReply, bool, error)
}

// ServerRecord is an engine that records the common intent whole in one
// call of its own (PostgreSQL from schema 24, tollgate_record): a new key
// on a ledger whose trust the database can judge alone, its intent, its
// payload, the projection and the event in the call's one transaction,
// at the database's time (GuardNew); or an existing key's projection row
// read in the same round trip, for the state machine to judge as its
// fast path does (GuardIndex). Anything else it answers GuardFull,
// having written nothing. A record is a guard's first half: the call is
// a GuardCall whose LeaseMS and PermitID are not used, and its lock
// waits are bounded as a ServerGuard's are. Its second result is false,
// with nothing sent, when the schema has no such call.
type ServerRecord interface {
	ServerRecord(ctx context.Context, c GuardCall) (GuardReply, bool, error)
}

// OneCallFlusher is an engine that ends a writing transaction in one
// statement (PostgreSQL from schema 33): FlushSQL appends the
// transaction's events and refreshes the projection rows of the keys it
// moved, taking eleven arguments: whether the events go first (a
// decision's, which then waits for the chain head under its bound), the
// events' eight fields as arrays, and the keys to refresh with their
// targets (NULL: keep). It answers the chain's last seq and hash, NULL
// when no event was appended, and is "" when the schema has no such
// statement.
type OneCallFlusher interface {
	FlushSQL() string
}

// GuardCall is what a guard sends: the key, its payload's canonical text
// (when Redacted the engine stores only its digests, and PostgreSQL
// hashes the text to bind them, schema 41), the agent, the context's canonical text and digest, the lease
// asked for and the permit id the call generated. Retry is set on an
// attempt after one that may have committed (its answer was lost): the
// answer then waits, as a commit does, for the ledger's replicas. When
// ctx has a deadline, the engine bounds the call's lock waits by the time
// left, measured once it holds a connection, less a margin for the
// answer's way back: the database then gives up (and commits nothing)
// before the client does; with too little time left it sends nothing and
// returns ErrNotSent. AttemptSHA256 is the digest of the caller's attempt
// id ("" for none): stored with the permit the call issues, and the key
// of a retry's replay (GuardAttempt).
type GuardCall struct {
	Key, SHA256, Canonical, Kind, Target, BodySHA256 string
	Redacted                                         bool
	Agent, ContextSHA256, Context                    string
	LeaseMS                                          int64
	PermitID                                         string
	Retry                                            bool
	AttemptSHA256                                    string
}

// ErrNotSent is a ServerGuard's failure before its call left the client:
// it could not get a connection, or, once it had one, the attempt had
// too little time left for the database to give up a lock and answer
// before the client gives up. Nothing of the call can have committed.
var ErrNotSent = errors.New("the call was not sent")

// GuardPath is what a server-side guard did.
type GuardPath string

// The paths of a GuardReply.
const (
	// GuardNew: the key was new and its policy's step was taken.
	GuardNew GuardPath = "new"
	// GuardIndex: an identical retry answered from the projection, whose
	// packed answer is Answer.
	GuardIndex GuardPath = "index"
	// GuardOwn: the key's running permit is the one this call's id
	// names: an earlier attempt of the call committed it.
	GuardOwn GuardPath = "own"
	// GuardAttempt: the key's running permit was issued to the call's
	// attempt (GuardCall.AttemptSHA256) under the agent name Agent;
	// Answer is the key's projection row, for a caller who is not that
	// agent.
	GuardAttempt GuardPath = "attempt"
	// GuardFull: nothing was written; the state machine's own path
	// decides.
	GuardFull GuardPath = "full"
)

// GuardReply is a server-side guard's answer. Now is the database's time
// of the call; Mode, RuleID (0: no rule matched), Pattern, TTLms and
// Approvers the policy applied to a new key; PermitID and LeaseMS the
// permit issued (GuardNew, auto) or owned (GuardOwn, GuardAttempt);
// ExpiresMS the approval request's deadline. ActiveEpoch is the ledger's
// active epoch ("" for none) when EpochRead: read beside a pending key's
// row. Agent is the agent a GuardAttempt's permit was issued to.
type GuardReply struct {
	Path               GuardPath
	Answer             string
	Now                int64
	Mode, Pattern      string
	RuleID, TTLms      int64
	Approvers          int64
	PermitID           string
	LeaseMS, ExpiresMS int64
	ActiveEpoch        string
	EpochRead          bool
	Agent              string
}

// ServerReport is an engine that files the common report whole in one
// call of its own (PostgreSQL from schema 19, tollgate_report): the
// permit holder's first report, within the lease, of a key no operator
// has reconciled, filed as accepted at the database's time. Anything
// else it answers Done false, having written nothing, and the state
// machine takes its own path. Its second result is false, with nothing
// sent, when the schema has no such call. The call's lock waits are
// bounded by ctx's deadline as a ServerGuard's are.
type ServerReport interface {
	ServerReport(ctx context.Context, c ReportCall) (ReportReply, bool, error)
}

// ReportCall is what a report sends: the key, the permit's id, the
// outcome, the reference to the external effect, the latency and the
// result kept for a replay.
type ReportCall struct {
	Key, PermitID, Outcome, Ref string
	LatencyMS                   int64
	Result                      string
}

// ReportReply is a server-side report's answer: Done when the report was
// filed as accepted, at the database's time Now.
type ReportReply struct {
	Done bool
	Now  int64
}

// Watch tells whether any process committed since it was last asked.
type Watch interface {
	// Changed reports whether the ledger changed since the previous call;
	// the first call reports true.
	Changed(ctx context.Context) (bool, error)
	// Close releases what the watch holds.
	Close() error
}

// Migration is a step of the schema that needs the state machine: an
// engine's migration of this version calls it inside its transaction,
// after its SQL (the ledger's identity, written as a fact and an event).
type Migration func(ctx context.Context, tx *sql.Tx, version int) error

// Retry runs once, and again while e calls its failure retryable,
// backing off from 2 ms up to 200 ms between tries, until ctx ends; the
// error it returns is mapped (MapError). Retrying a whole transaction is
// safe because every write of tollgate is idempotent.
func Retry(ctx context.Context, e interface {
	Retryable(error) bool
	MapError(error) error
}, once func() error) error {
	backoff := 2 * time.Millisecond
	for {
		err := once()
		if err == nil || !e.Retryable(err) {
			return e.MapError(err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", ErrBusy, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// Baseline is the schema version of the first release on both engines:
// the schema each engine's definition files create. Versions below it
// were development schemas, before anything was released; a number far
// above the last of them (SQLite 20, PostgreSQL 42) makes one of them
// recognisable at a glance. A later change to a schema is a numbered
// migration above Baseline.
const Baseline = 100

// Step is one numbered migration of an engine's schema: the SQL of a file
// named NNNN_what.sql.
type Step struct {
	Version int
	Name    string
	SQL     string
}

// Steps reads the migrations in dir of fsys (files named NNNN_what.sql,
// NNNN above Baseline; anything else there, a README, is not one), in
// version order. There may be none: a schema at its baseline has no
// migration on top of it.
func Steps(fsys fs.FS, dir string) ([]Step, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var steps []Step
	for _, ent := range ents {
		if !strings.HasSuffix(ent.Name(), ".sql") {
			continue
		}
		n, _, ok := strings.Cut(ent.Name(), "_")
		v, err := strconv.Atoi(n)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", ent.Name())
		}
		if v <= Baseline {
			// A development migration merged after the fold would
			// otherwise be skipped without a word by every ledger.
			return nil, fmt.Errorf("migration %s: numbered at or below the baseline %d; a migration on top of the baseline is numbered above it", ent.Name(), Baseline)
		}
		b, err := fs.ReadFile(fsys, dir+"/"+ent.Name())
		if err != nil {
			return nil, err
		}
		steps = append(steps, Step{v, ent.Name(), string(b)})
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].Version < steps[j].Version })
	return steps, nil
}

// Current is the schema version a build writes: its last migration's,
// or Baseline when it has none.
func Current(steps []Step) int {
	if len(steps) == 0 {
		return Baseline
	}
	return max(Baseline, steps[len(steps)-1].Version)
}

// Errors an engine reports its failures with; package ledger exports
// each under the same name, so callers match them with errors.Is.
var (
	// ErrInvalidInput matches every refusal of a key, payload or argument.
	ErrInvalidInput = errors.New("invalid input")
	// ErrNoLedger means a reading command found no ledger to read.
	ErrNoLedger = errors.New("no ledger")
	// ErrAppendOnly means a statement tried to change or remove evidence.
	ErrAppendOnly = errors.New("ledger evidence is append-only")
	// ErrBusy means the ledger stayed locked by other writers until the
	// caller's context ended.
	ErrBusy = errors.New("ledger busy")
	// ErrNewerSchema means the ledger was written by a newer tollgate.
	ErrNewerSchema = errors.New("ledger schema is newer than this tollgate")
	// ErrNotLedger means what was named exists but is not a ledger.
	ErrNotLedger = errors.New("file is not a tollgate ledger")
	// ErrNeedsMigration means a read-only open found an older schema.
	ErrNeedsMigration = errors.New("ledger needs migrating, which needs write access")
	// ErrDevelopmentSchema means the ledger has a schema from before the
	// first release (below Baseline) that this build does not carry
	// forward: only the last development schema is.
	ErrDevelopmentSchema = errors.New("ledger has a development schema from before the first release")
	// ErrReadOnly means the ledger could not be written (permissions, a
	// read-only mount, a full disk).
	ErrReadOnly = errors.New("ledger cannot be written")
	// ErrNotPermitted means the database refused the caller's role.
	ErrNotPermitted = errors.New("not permitted")
	// ErrOthersKey is ErrNotPermitted for a key another database role
	// recorded, which an agent's role does not lock (KeyLocker): its
	// transaction may log a conflict on the key and write nothing else.
	ErrOthersKey = fmt.Errorf("%w: the key was recorded by another database role, and an agent's role locks only its own keys and new ones, "+
		"so it may log a conflict on it and change nothing else", ErrNotPermitted)
	// ErrUnavailable means the ledger could not be reached (a database
	// restarting, a connection lost) for as long as the caller would
	// retry, and nothing of the call was recorded: it is safe to repeat.
	ErrUnavailable = errors.New("ledger unavailable; nothing was recorded, the call is safe to repeat")
	// ErrCommitUnknown means the last attempt was lost while committing:
	// it may or may not have been recorded. Every write is idempotent, so
	// repeating it is safe, but status says which it was.
	ErrCommitUnknown = errors.New("the ledger did not confirm the commit; ask 'tollgate status KEY' before acting on it")
)

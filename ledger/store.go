// Package ledger is tollgate's domain core: action keys, the canonical
// payload digest, and the state machine over the ledger that holds
// intents, the state machine's facts and the hash-chained event log. It is
// written once, in SQL every supported engine speaks, against the seam in
// package engine; each storage engine is a package of its own (sqlite).
package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/ledger/engine"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
	"github.com/tollgate-dev/tollgate/ledger/sqlite"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// Options configures Open.
type Options struct {
	// Now is the clock. Expiry and leases are computed from it, so tests can
	// move time. Nil means time.Now.
	Now func() time.Time
	// BusyTimeout is how long one statement waits for another process's
	// lock before the bounded retry loop takes over. Zero means 5s.
	BusyTimeout time.Duration
	// ReadOnly opens only the reader pool: no migration, no write.
	ReadOnly bool
	// Existing writes to a ledger that must already exist at this
	// build's schema: it neither creates nor migrates one (the console,
	// backup: commands that read before they write).
	Existing bool
	// OneShot is for a process that makes one call and exits (the CLI):
	// only the writer connection is opened (retries are read on it outside
	// a transaction), so the schema is parsed once, which costs more than
	// the call itself with modernc.org/sqlite; statements are prepared per
	// transaction, not kept for reuse.
	OneShot bool
	// Signers are the operator keys this process may sign with (a key
	// file, ssh-agent's keys). On a signed ledger the first one that is a
	// registered operator signs every operator-authored fact, and its
	// registered name is the operator's.
	Signers []ssh.Signer
	// Operator is the name used on a ledger that was never signed when a
	// call names none (the CLI passes the login name).
	Operator string
	// NoWriterQueue leaves ordering SQLite writers to SQLite's busy
	// handler alone (a waiting writer sleeps and polls). By default writers
	// first take an OS lock on a sidecar file, which hands the write lock
	// over promptly and in turn (see BenchmarkContention16).
	NoWriterQueue bool
	// Anchor, when set, is the allowed_signers list outside the ledger:
	// a signing key must be listed there too, for permits and signing.
	Anchor *opkeys.Anchor
	// RetryFor bounds how long a write is retried after a transient
	// failure (a lost connection, a restarting server, lock contention)
	// before it gives up with ErrUnavailable, ErrBusy or ErrCommitUnknown;
	// zero retries until the caller's context ends.
	RetryFor time.Duration
	// AttemptTimeout bounds each attempt of a read or a write: an attempt
	// that has no answer by then (a lock another session holds, a server
	// or network that stopped answering without closing the connection,
	// a COMMIT waiting for a synchronous standby that is gone) is
	// abandoned and, within RetryFor, run again on a new connection. One
	// abandoned before its COMMIT was sent recorded nothing; one abandoned
	// during its COMMIT may have (ErrCommitUnknown if no later attempt
	// answers). Zero leaves an attempt bounded by RetryFor alone. Reads of
	// the whole ledger (verify, export, planning an archive) are bounded
	// by neither: they take as long as the ledger is large.
	AttemptTimeout time.Duration
	// Witness is the witness file guard consults before a grant (the CLI
	// passes SystemWitnessPath, never a path from the environment): a
	// head it saw that the ledger no longer holds, or another ledger at
	// this path, refuses the permit. Empty consults none.
	Witness string
	// GroupCommit commits writes that arrive while another commits
	// together, one transaction and one fsync for all, each in its own
	// savepoint with its own answer (group.go). For a process that serves
	// many callers at once; a lone caller pays nothing for it. Ignored by
	// a OneShot store.
	GroupCommit bool
}

// Store is an open ledger: the state machine over one engine. It is safe
// for concurrent use by many goroutines, and many processes may open the
// same ledger at once.
type Store struct {
	eng  engine.Engine
	w    *sql.DB // eng.Writer(): nil when read-only
	r    *sql.DB // eng.Reader()
	wc   *stmtCache
	rc   *stmtCache
	fast *sql.Stmt // fastLookup
	// fastArchived is fastLookup's look at an archived key's stub.
	fastArchived *sql.Stmt
	now          func() time.Time
	// engineClock is set when no clock was injected: an engine with a
	// shared clock (PostgreSQL) then judges deadlines.
	engineClock bool
	// noEngineClock is set once the engine answered it has no clock.
	noEngineClock atomic.Bool
	ro            bool
	// sealed is set on an archive file (its chain ends with its seal):
	// every write is refused.
	sealed bool
	// archived is set once the ledger is known to have archived keys
	// (at open, or when this store archives or meets one).
	archived atomic.Bool
	one      bool // OneShot
	// id is the ledger id, cached for the writer.
	id idCache
	// signers, operator and anchor: see Options.
	signers  []ssh.Signer
	operator string
	anchor   *opkeys.Anchor
	witness  *sharedWitness
	retryFor time.Duration
	// attemptTimeout: see Options.AttemptTimeout.
	attemptTimeout time.Duration
	// grouped is Options.GroupCommit; group its queue (group.go).
	grouped bool
	group   group
	// commits counts committed writing transactions: what a group commit
	// saves is calls per commit.
	commits atomic.Int64
}

// Path names the ledger: its file path, or its URL without a password.
func (s *Store) Path() string { return s.eng.Location() }

// DefaultPath returns the ledger path chosen when neither --db nor
// TOLLGATE_DB is given: tollgate/ledger.db under the XDG data directory.
func DefaultPath() (string, error) {
	if v := os.Getenv("TOLLGATE_DB"); v != "" {
		return v, nil
	}
	base, err := xdgDir("XDG_DATA_HOME", ".local/share")
	if err != nil {
		return "", fmt.Errorf("no ledger path: set --db or TOLLGATE_DB (%v)", err)
	}
	return filepath.Join(base, "tollgate", "ledger.db"), nil
}

// xdgDir is the XDG base directory named by env (an absolute path), else
// fallback under the home directory, as the XDG spec says.
func xdgDir(env, fallback string) (string, error) {
	if base := os.Getenv(env); base != "" && filepath.IsAbs(base) {
		return base, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, filepath.FromSlash(fallback)), nil
}

// Open opens the ledger at path: a postgres:// URL (package postgres) or
// an SQLite file (package sqlite), which a writing store creates when
// missing and migrates when older. A
// read-only store never creates, migrates or changes anything; what is
// not a ledger is refused by name and left as it is.
func Open(ctx context.Context, path string, opt Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty ledger path", ErrInvalidInput)
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	var eng engine.Engine
	var err error
	if postgres.IsURL(path) {
		eng, err = postgres.Open(ctx, path, postgres.Options{ReadOnly: opt.ReadOnly, Existing: opt.Existing, After: afterMigration(now, postgres.Rebind)})
		var ce *pgconn.ConnectError
		var pe *pgconn.PgError
		switch {
		case err == nil:
		case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "28"):
			// Refused at login (a wrong password, no pg_hba.conf line for
			// this role): a misconfiguration, which no retry cures.
			err = fmt.Errorf("%w: the database refused this login (%v)", ErrNotPermitted, err)
		case errors.As(err, &pe) && pe.Code == "3D000":
			err = fmt.Errorf("%w: no such database (%v)", ErrNoLedger, err)
		case errors.As(err, &ce) || new(postgres.Engine).Retryable(err):
			// The server could not be reached, or the session was lost
			// while the schema's version was read (a server restarting, a
			// terminated backend): nothing the caller asked for was done,
			// and opening again is safe (a migration is one transaction
			// that checks the version first).
			err = fmt.Errorf("%w (%v)", ErrUnavailable, err)
		}
	} else {
		eng, err = sqlite.Open(ctx, path, sqlite.Options{BusyTimeout: opt.BusyTimeout, ReadOnly: opt.ReadOnly,
			Existing: opt.Existing, After: afterMigration(now, nil), WriterQueue: !opt.NoWriterQueue})
	}
	if err != nil {
		return nil, err
	}
	s, err := New(ctx, eng, opt)
	if err != nil {
		eng.Close()
		return nil, err
	}
	return s, nil
}

// New runs the state machine on an engine already open; the store owns
// it from then on and closes it with itself.
func New(ctx context.Context, eng engine.Engine, opt Options) (*Store, error) {
	engineClock := opt.Now == nil
	if opt.Now == nil {
		opt.Now = time.Now
	}
	s := &Store{eng: eng, w: eng.Writer(), r: eng.Reader(), now: opt.Now, engineClock: engineClock, ro: opt.ReadOnly || eng.Writer() == nil,
		one: opt.OneShot && eng.Writer() != nil, grouped: opt.GroupCommit && !opt.OneShot, signers: opt.Signers, operator: opt.Operator, anchor: opt.Anchor,
		witness: &sharedWitness{path: opt.Witness}, retryFor: opt.RetryFor, attemptTimeout: opt.AttemptTimeout}
	// An engine that takes ? as written (SQLite) gets no rebind call on
	// the hot path.
	rebind := eng.Rebind
	if rebind("?") == "?" {
		rebind = nil
	}
	if s.w != nil {
		s.wc = newStmtCache(s.w, s.one, rebind)
	}
	// An archive file is sealed: its last event ends it, and nothing is
	// ever written to it again (archive.go).
	db := s.r
	if s.one {
		db = s.w
	}
	// One statement: whether it is sealed, and whether it has archived
	// keys (fastLookup then also asks their stubs).
	var last sql.NullString
	var archived bool
	err := db.QueryRowContext(ctx, "SELECT (SELECT type FROM events WHERE seq = (SELECT seq FROM chain_head WHERE one = 1)), EXISTS (SELECT 1 FROM archives)").Scan(&last, &archived)
	s.sealed = err == nil && last.String == evArchiveSealed
	s.archived.Store(err == nil && archived)
	s.rc = newStmtCache(s.r, s.one, rebind)
	if s.one {
		return s, nil // fastLookup asks the writer connection, unprepared
	}
	if s.fast, err = s.r.PrepareContext(ctx, eng.Rebind(fastQuery)); err != nil {
		return nil, openFailed(eng, err)
	}
	if s.fastArchived, err = s.r.PrepareContext(ctx, eng.Rebind(fastArchivedQuery)); err != nil {
		return nil, openFailed(eng, err)
	}
	return s, nil
}

// openFailed is the error of an open whose engine answered but whose
// statements could not be prepared. The reader pool makes connections of
// its own, so a server failing over between the engine's first
// connection and these (TestPostgresFailoverWithoutLoss: one reset, the
// other host still read-only) is met here too: nothing was asked of the
// ledger, and opening again is safe (ErrUnavailable).
func openFailed(eng engine.Engine, err error) error {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || eng.Retryable(err) {
		return fmt.Errorf("open ledger %s: %w (%v)", eng.Location(), ErrUnavailable, err)
	}
	return fmt.Errorf("open ledger %s: %w", eng.Location(), eng.MapError(err))
}

// afterMigration is the state machine's part of making a schema, called
// in its transaction: on PostgreSQL it makes tollgate_refresh_index from
// the very SQL verify checks the projection with (state.go); and a
// ledger without an identity (a new one, or a file the seed fixture
// made) is given one, sealing the rows already there, with the chain
// head on its event.
func afterMigration(now func() time.Time, rebind func(string) string) engine.Migration {
	return func(ctx context.Context, stx *sql.Tx, version int) error {
		if rebind != nil {
			if err := createServerFunctions(ctx, stx); err != nil {
				return err
			}
		}
		tx := &Tx{tx: stx, cache: newStmtCache(nil, true, rebind), now: toMS(now()), migrating: true}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM ledger_meta").Scan(&n); err != nil || n > 0 {
			return err
		}
		if err := sealAndIdentify(ctx, tx, tx.now); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE chain_head SET seq = ?, hash = ? WHERE one = 1", tx.head.Seq, tx.head.Hash)
		return err
	}
}

// Close releases the engine and the statements prepared on it.
func (s *Store) Close() error {
	if s.fast != nil {
		s.fast.Close()
	}
	if s.fastArchived != nil {
		s.fastArchived.Close()
	}
	if s.rc != nil {
		s.rc.close()
	}
	if s.wc != nil {
		s.wc.close()
	}
	return s.eng.Close()
}

// SchemaVersion is the schema version this build writes to an SQLite
// ledger.
func SchemaVersion() int { return sqlite.SchemaVersion() }

// SchemaVersionOf is the schema version this build writes to the ledger
// path names: PostgreSQL's migrations are numbered on their own.
func SchemaVersionOf(path string) int {
	if postgres.IsURL(path) {
		return postgres.SchemaVersion()
	}
	return sqlite.SchemaVersion()
}

// write runs fn in one writing transaction, retrying the whole
// transaction while the engine says a retry can clear the failure (lock
// contention, serialization), until ctx ends. Retrying is safe because
// every write in this package is idempotent.
func (s *Store) write(ctx context.Context, fn func(*Tx) error) error {
	if s.w == nil {
		return fmt.Errorf("%w: ledger opened read-only", ErrReadOnly)
	}
	if s.sealed {
		return fmt.Errorf("%w: this ledger is a sealed archive; write to the live ledger", ErrReadOnly)
	}
	if s.grouped {
		return s.writeGrouped(ctx, fn)
	}
	return s.retry(ctx, s.attemptTimeout, func(ctx context.Context) error { return s.writeOnce(ctx, fn) })
}

// writeKey is write for a transaction that moves one action only (guard,
// record, report), named by its logical key. On PostgreSQL it runs
// beside other keys' transactions instead of after them: it locks its
// key (every epoch of it) and shares the ledger-wide lock that writers of
// ledger-wide facts take alone, and its events are appended to the chain
// in one call just before it commits (flushEvents), so that the chain
// head's lock is held for one statement and the commit, not for the whole
// transaction (issue 25: one head locked by every guard for all of its
// round trips made throughput flat from 1 to 32 agents). SQLite has one
// writer at a time anyway: there writeKey is write.
//
// A store that groups its writes (Options.GroupCommit) commits many keys
// in one transaction on SQLite, where one commit per batch is the point.
// On PostgreSQL a grouped store (mcp serve, the console) writes each key
// on its own, as any store does: a batch would take the ledger-wide lock
// alone, which an agent's role may not (schema 20), and would make every
// other agent's key transactions wait for it.
func (s *Store) writeKey(ctx context.Context, logical string, fn func(*Tx) error) error {
	if _, ok := s.eng.(engine.KeyLocker); !ok || s.eng.LockSuffix() == "" || logical == "" || s.w == nil || s.sealed {
		return s.write(ctx, fn)
	}
	return s.retry(ctx, s.attemptTimeout, func(ctx context.Context) error { return s.writeOnceFor(ctx, logical, fn) })
}

func (s *Store) writeOnce(ctx context.Context, fn func(*Tx) error) error {
	return s.writeOnceFor(ctx, "", fn)
}

// writeOnceFor is one attempt of write (logical empty) or of writeKey.
func (s *Store) writeOnceFor(ctx context.Context, logical string, fn func(*Tx) error) error {
	release, err := s.eng.WriteTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	stx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer s.wc.fill(ctx)
	// An engine that locks the head row (PostgreSQL) keeps the chain and
	// the projection behind the schema's functions.
	// Every statement runs under the attempt's context (pin), whatever
	// context fn passes: a statement that hangs ends with the attempt.
	tx := &Tx{tx: stx, cache: s.wc, id: &s.id, lock: s.eng.LockSuffix(), server: s.eng.LockSuffix() != "", pin: ctx, keyLock: logical}
	if logical != "" {
		if err := s.beginKey(ctx, tx); err != nil {
			stx.Rollback()
			return err
		}
	} else if err := s.begin(ctx, tx); err != nil {
		stx.Rollback()
		return err
	}
	if tx.lock != "" && logical == "" {
		// Where writers do not exclude each other (PostgreSQL), the chain
		// head is locked before anything is read: what this transaction
		// reads about a key cannot change before it commits.
		if err := lockHead(ctx, tx); err != nil {
			stx.Rollback()
			return err
		}
	}
	if err := fn(tx); err != nil {
		stx.Rollback()
		return err
	}
	// The projection first: a key transaction's events lock the chain
	// head, which it then holds for that one statement and its commit.
	flushes := []func(context.Context, *Tx) error{flushIndex, flushEvents}
	if tx.eventsFirst {
		flushes = []func(context.Context, *Tx) error{waitHead, flushEvents, flushIndex}
	}
	if f, ok := s.eng.(engine.OneCallFlusher); ok && tx.server {
		if q := f.FlushSQL(); q != "" {
			flushes = []func(context.Context, *Tx) error{func(ctx context.Context, tx *Tx) error { return flushInOne(ctx, tx, q) }}
		}
	}
	for _, flush := range flushes {
		if err := flush(ctx, tx); err != nil {
			stx.Rollback()
			return err
		}
	}
	if err := saveHead(ctx, tx); err != nil {
		stx.Rollback()
		return err
	}
	// An attempt whose time ran out before its COMMIT was sent recorded
	// nothing: database/sql answers the context's error without sending
	// it, which must not read as a lost commit.
	if err := ctx.Err(); err != nil {
		stx.Rollback()
		return err
	}
	if err := stx.Commit(); err != nil {
		return &commitError{err}
	}
	s.commits.Add(1)
	return nil
}

// read runs fn in a short read-only transaction on the reader pool, so that
// every query in fn sees one snapshot.
func (s *Store) read(ctx context.Context, fn func(*Tx) error) error {
	return s.retry(ctx, s.attemptTimeout, func(ctx context.Context) error { return s.readOnce(ctx, fn) })
}

// readAll is read for a read of the whole ledger (verify, export,
// planning an archive): retried as read is, but an attempt is bounded by
// nothing but ctx, since it takes as long as the ledger is large.
func (s *Store) readAll(ctx context.Context, fn func(*Tx) error) error {
	return s.retry(ctx, unbounded, func(ctx context.Context) error { return s.readOnce(ctx, fn) })
}

// unbounded, as retry's perAttempt, runs each attempt under the caller's
// context alone.
const unbounded time.Duration = -1

// retry runs once, and again while the engine calls its failure
// retryable (lock contention, serialization, a lost connection) or the
// attempt was abandoned without an answer, until ctx ends. Each attempt
// runs under a context of its own, bounded by perAttempt when positive,
// by the retry budget when zero, and by ctx alone when unbounded.
func (s *Store) retry(ctx context.Context, perAttempt time.Duration, once func(context.Context) error) error {
	rctx := ctx
	if s.retryFor > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, s.retryFor)
		defer cancel()
	}
	// lost: an attempt's COMMIT failed, so it may have been recorded,
	// whatever the later attempts met (a server that then could not be
	// reached says nothing about it).
	// busy: the last attempt the database refused for a lock it would not
	// wait for (55P03, which names the lock's holders where tollgate's
	// functions know them): when the attempts after it were only cut off
	// by the budget, it says more than the cut does.
	var last, lost, busy error
	err := engine.Retry(rctx, attemptRetry{s.eng}, func() error {
		last = attempt(ctx, rctx, perAttempt, once)
		if ce := (*commitError)(nil); errors.As(last, &ce) {
			lost = last
		}
		if last != nil && errors.Is(s.eng.MapError(last), ErrBusy) {
			busy = last
		}
		return last
	})
	if lost != nil && err != nil && last != nil && s.retryable(last) {
		last = lost
	}
	out := s.classify(err, last)
	// A lock the database gave up under its own bound names its holders
	// (schemas 25 and 29): that is the answer too when the budget ran out
	// after it.
	if lost == nil && busy != nil && err != nil && (errors.Is(last, context.DeadlineExceeded) || errors.As(last, new(*abandonedError)) || namesHolder(last)) {
		out = s.eng.MapError(busy)
	}
	// A caller that gave up is told so (context.Canceled), whatever its
	// last attempt met: one cut off while it still connected says only
	// that the connection failed. A commit that may have happened stays
	// the answer: that the caller left does not undo it.
	if out != nil && ctx.Err() != nil && !errors.Is(out, ctx.Err()) && !errors.Is(out, ErrCommitUnknown) {
		out = &callerLeft{out, ctx.Err()}
	}
	return out
}

// callerLeft is a retried call's failure once its caller gave up: it
// reads as the failure (whose text often names the context's error
// already) and is also the context's error for errors.Is.
type callerLeft struct{ err, cause error }

// Error is the failure's text, with the caller's reason when it does not
// say it.
func (e *callerLeft) Error() string {
	if strings.Contains(e.err.Error(), e.cause.Error()) {
		return e.err.Error()
	}
	return e.err.Error() + " (" + e.cause.Error() + ")"
}

// Unwrap gives both, for errors.Is and errors.As.
func (e *callerLeft) Unwrap() []error { return []error{e.err, e.cause} }

// attempt runs once under its own deadline (perAttempt, within the
// retry budget rctx). An attempt cut off by either while the caller
// still waits is marked abandoned: retried, and classified as the
// attempt's own failure was (a cut during COMMIT stays a lost commit).
func attempt(ctx, rctx context.Context, perAttempt time.Duration, once func(context.Context) error) error {
	actx, cancel := rctx, context.CancelFunc(func() {})
	switch {
	case perAttempt == unbounded:
		actx = ctx
	case perAttempt > 0:
		actx, cancel = context.WithTimeout(rctx, perAttempt)
	}
	defer cancel()
	t0 := time.Now()
	err := once(actx)
	if err != nil && actx.Err() != nil && ctx.Err() == nil {
		return &abandonedError{err: err, after: time.Since(t0).Round(100 * time.Millisecond)}
	}
	return err
}

// statementCtx bounds a lone statement outside the retry loop (the
// guard's fast lookup, whose failure falls back to the full path) as an
// attempt is bounded.
func (s *Store) statementCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if d := cmp.Or(s.attemptTimeout, s.retryFor); d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return ctx, func() {}
}

// abandonedError is an attempt given up after its deadline with no
// answer from the database.
type abandonedError struct {
	err   error
	after time.Duration
}

// Error names the wait and the attempt's own failure (the key is in the
// caller's words around it; no payload is).
func (e *abandonedError) Error() string {
	return fmt.Sprintf("attempt abandoned after %s without an answer (a lock another session holds, or a server or network that stopped answering): %v",
		e.after, e.err)
}

// Unwrap keeps the attempt's failure visible: a commitError under it
// still marks the commit as lost.
func (e *abandonedError) Unwrap() error { return e.err }

// attemptRetry is the engine, retrying abandoned attempts too.
type attemptRetry struct{ engine.Engine }

// Retryable implements engine.Retry's test.
func (a attemptRetry) Retryable(err error) bool {
	var ab *abandonedError
	return errors.As(err, &ab) || a.Engine.Retryable(err)
}

// retryable reports whether a failure is one a retry may clear.
func (s *Store) retryable(err error) bool { return attemptRetry{s.eng}.Retryable(err) }

// classify says what a write that gave up means for its caller: lost
// while committing (it may have been recorded: ErrCommitUnknown), or
// lost before (nothing was: ErrUnavailable when the database could not
// be reached, ErrBusy when other writers held the ledger). Each keeps
// the driver's words after the rule.
func (s *Store) classify(err, last error) error {
	if err == nil || last == nil || !s.retryable(last) {
		return err
	}
	var ce *commitError
	switch {
	case errors.As(last, &ce) && errors.As(last, new(*abandonedError)):
		return fmt.Errorf("%w (%v)", ErrCommitUnknown, last)
	case errors.As(last, &ce):
		return fmt.Errorf("%w (%v)", ErrCommitUnknown, ce.err)
	case errors.Is(s.eng.MapError(last), ErrBusy):
		// The budget's cut, with what the last attempt met: a rule the
		// database retries (a fact's time that is not the database's,
		// schema 27) says why the writes never went through.
		return fmt.Errorf("%w (%v)", err, last)
	}
	return fmt.Errorf("%w (%v)", ErrUnavailable, last)
}

// commitError marks a failure of COMMIT itself, whose effect is unknown.
type commitError struct{ err error }

func (e *commitError) Error() string { return "commit: " + e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

func (s *Store) readOnce(ctx context.Context, fn func(*Tx) error) error {
	opt := &sql.TxOptions{ReadOnly: true}
	if s.eng.Name() != "sqlite" {
		// One snapshot for every statement of the read (verify, export,
		// status read many): PostgreSQL's default, READ COMMITTED, gives
		// each statement its own, and a verify racing a writer would see
		// the events of one moment and the chain head of the next.
		opt.Isolation = sql.LevelRepeatableRead
	}
	stx, err := s.r.BeginTx(ctx, opt)
	if err != nil {
		return err
	}
	defer s.rc.fill(ctx)
	defer stx.Rollback()
	tx := &Tx{tx: stx, cache: s.rc, pin: ctx}
	if err := s.begin(ctx, tx); err != nil {
		return err
	}
	return fn(tx)
}

// begin reads the transaction's clock once: the engine's where it has one
// that every host shares and no clock was injected, else the store's.
func (s *Store) begin(ctx context.Context, tx *Tx) error {
	if s.engineClock && !s.noEngineClock.Load() {
		t, err := s.eng.Clock(ctx, tx.tx)
		if err != nil {
			return err
		}
		if !t.IsZero() {
			tx.now = toMS(t)
			return nil
		}
		s.noEngineClock.Store(true) // the engine has none: ask no more
	}
	tx.now = toMS(s.now())
	return nil
}

// beginKey takes a key transaction's locks (the ledger-wide lock shared,
// the key's alone) and reads the transaction's time after them, in one
// round trip: the engine's clock, or the injected one when the store does
// not use the engine's.
func (s *Store) beginKey(ctx context.Context, tx *Tx) error {
	t, err := s.eng.(engine.KeyLocker).LockKey(ctx, tx.tx, tx.keyLock)
	if errors.Is(err, engine.ErrOthersKey) {
		tx.othersKey, err = true, nil
	}
	if err != nil {
		return fmt.Errorf("lock key %s: %w", tx.keyLock, err)
	}
	if s.engineClock && !s.noEngineClock.Load() {
		tx.now = toMS(t)
		return nil
	}
	tx.now = toMS(s.now())
	return nil
}

// writeKeyed is writeKey as write is Store.write.
func writeKeyed[T any](ctx context.Context, s *Store, logical string, fn func(*Tx) (T, error)) (T, error) {
	var out T
	err := s.writeKey(ctx, logical, func(tx *Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	return out, err
}

// write runs fn as Store.write does and returns what the committed
// attempt returned: a retried attempt's results never leak into the
// answer, since each attempt's are its own.
func write[T any](ctx context.Context, s *Store, fn func(*Tx) (T, error)) (T, error) {
	var out T
	err := s.write(ctx, func(tx *Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	return out, err
}

// read is write's twin for one read-only snapshot.
func read[T any](ctx context.Context, s *Store, fn func(*Tx) (T, error)) (T, error) {
	var out T
	err := s.read(ctx, func(tx *Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	return out, err
}

// refused is what a write returns when it refuses after logging the
// attempt (a conflict, a fence, a refused report): the value, and the
// refusal, reported only once the transaction that logged it committed.
type refused[T any] struct {
	val T
	err error
}

// toMS is the ledger's time unit: integer milliseconds since the epoch.
func toMS(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

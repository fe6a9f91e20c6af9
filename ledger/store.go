// Package ledger is tollgate's storage and domain core: action keys, the
// canonical payload digest, and the SQLite ledger holding intents, the
// state machine's facts and the hash-chained event log. All SQL lives here,
// behind Store, so that another backend can be added without touching the
// CLI or the console.
package ledger

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver

	"github.com/tollgate-dev/tollgate/opkeys"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

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
	// Anchor, when set, is the allowed_signers list outside the ledger:
	// a signing key must be listed there too, for permits and signing.
	Anchor *opkeys.Anchor
}

// Store is an open ledger. It is safe for concurrent use by many
// goroutines, and many processes may open the same file at once.
type Store struct {
	path string
	w    *sql.DB // one connection, BEGIN IMMEDIATE
	r    *sql.DB // readers, query_only
	wc   *stmtCache
	rc   *stmtCache
	fast *sql.Stmt // fastLookup
	now  func() time.Time
	ro   bool
	one  bool // OneShot
	// id is the ledger id, cached for the writer.
	id idCache
	// signers, operator and anchor: see Options.
	signers  []ssh.Signer
	operator string
	anchor   *opkeys.Anchor
}

// Path returns the ledger file path.
func (s *Store) Path() string { return s.path }

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

// dsn builds the connection string. Pragmas go here because they are per
// connection: a pool opens connections whenever it likes.
func dsn(path string, busy time.Duration, writer bool) string {
	return dsnWith(path, busy, writer, false)
}

// dsnWith adds immutable=1 for a ledger on read-only media: without write
// access to the folder SQLite cannot create the WAL index, and nobody can
// be writing the file there anyway.
func dsnWith(path string, busy time.Duration, writer, immutable bool) string {
	q := url.Values{}
	ms := strconv.FormatInt(busy.Milliseconds(), 10)
	q.Add("_pragma", "busy_timeout("+ms+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "recursive_triggers(1)")
	q.Add("_pragma", "synchronous(FULL)")
	if writer {
		// No journal_mode here: setting it rewrites the header, which must
		// not happen before the file is known to be a ledger (migrate sets
		// WAL once, and it persists).
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
		q.Set("mode", "ro")
	}
	if immutable {
		q.Set("immutable", "1")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Open opens the ledger at path. A writing store creates a missing
// ledger and migrates a tollgate ledger of an older schema or a file that
// holds only the seed fixture's intents table; a read-only store never
// creates, migrates or changes a file. Anything else (an empty file,
// another application's SQLite database, a file that is not SQLite, a
// directory, a device, a dangling link) is refused with an error that
// names it, and its bytes stay as they were.
func Open(ctx context.Context, path string, opt Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: empty ledger path", ErrInvalidInput)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.BusyTimeout == 0 {
		opt.BusyTimeout = 5 * time.Second
	}
	path, exists, err := checkPath(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		if opt.ReadOnly || opt.Existing {
			return nil, fmt.Errorf("%w: no ledger at %s (a reading command never creates one)", ErrNoLedger, path)
		}
		if err := createLedger(ctx, path, opt); err != nil {
			return nil, err
		}
	}
	s := &Store{path: path, now: opt.Now, ro: opt.ReadOnly, one: opt.OneShot && !opt.ReadOnly,
		signers: opt.Signers, operator: opt.Operator, anchor: opt.Anchor}
	if err := s.openPools(ctx, opt); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openPools identifies the file through the first connection it opens
// (which changes nothing), migrates it if this store may write, and then
// opens the rest.
func (s *Store) openPools(ctx context.Context, opt Options) error {
	var err error
	db := &s.r
	if !opt.ReadOnly {
		db = &s.w
	}
	if *db, err = sql.Open("sqlite", dsn(s.path, opt.BusyTimeout, !opt.ReadOnly)); err != nil {
		return err
	}
	kind, version, err := identifyDB(ctx, *db)
	err = s.explainIO(err)
	if errors.Is(err, ErrReadOnly) && opt.ReadOnly {
		// The folder is read-only, so SQLite cannot make its shared-memory
		// file: read the file as immutable, which is right only when no
		// write-ahead log holds rows beside it.
		if fi, e := os.Stat(s.path + "-wal"); e == nil && fi.Size() > 0 {
			return fmt.Errorf("%w: ledger %s has a write-ahead log (%s-wal, %d bytes) that SQLite cannot read where the folder is read-only; "+
				"copy the folder to writable storage, or mount it writable, before reading", ErrReadOnly, s.path, s.path, fi.Size())
		}
		s.r.Close()
		if s.r, err = sql.Open("sqlite", dsnWith(s.path, opt.BusyTimeout, false, true)); err != nil {
			return err
		}
		kind, version, err = identifyDB(ctx, s.r)
	}
	if err != nil {
		return fmt.Errorf("open ledger %s: %w", s.path, err)
	}
	if e := kind.refusal(s.path, version); e != nil {
		return e
	}
	if opt.ReadOnly || opt.Existing {
		if kind != kindLedger {
			return fmt.Errorf("%w: ledger %s has schema version %d, this build reads %d; run 'tollgate migrate' (or any writing command) first",
				ErrNeedsMigration, s.path, version, SchemaVersion())
		}
	}
	if !opt.ReadOnly {
		s.w.SetMaxOpenConns(1)
		s.wc = newStmtCache(s.w, s.one)
		if kind != kindLedger {
			if err := s.migrate(ctx, version); err != nil {
				return fmt.Errorf("open ledger %s: %w", s.path, err)
			}
		}
		// sql.Open connects lazily: a one-shot process that only guards
		// never opens a reader connection.
		if s.r, err = sql.Open("sqlite", dsn(s.path, opt.BusyTimeout, false)); err != nil {
			return err
		}
	}
	s.r.SetMaxOpenConns(4)
	s.r.SetConnMaxIdleTime(time.Minute)
	s.rc = newStmtCache(s.r, s.one)
	if s.one {
		return nil // fastLookup asks the writer connection, unprepared
	}
	if s.fast, err = s.r.PrepareContext(ctx, fastQuery); err != nil {
		return fmt.Errorf("open ledger %s: %w", s.path, mapDriverError(err))
	}
	return nil
}

// identifyDB reads the header fields and table names in one statement.
func identifyDB(ctx context.Context, db *sql.DB) (fileKind, int, error) {
	var app, version int
	var names sql.NullString
	err := db.QueryRowContext(ctx, `SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version),
		(SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name))`).
		Scan(&app, &version, &names)
	if err != nil {
		return 0, 0, mapDriverError(err)
	}
	var tables []string
	if names.String != "" {
		tables = strings.Split(names.String, ",")
	}
	return classify(app, version, tables), version, nil
}

// Close releases both pools.
func (s *Store) Close() error {
	// Readers first: the last connection to close checkpoints the WAL into
	// the file and removes it, and a read-only one cannot, which would leave
	// the next process to read the whole WAL back before its first query.
	if s.fast != nil {
		s.fast.Close()
	}
	var err error
	if s.r != nil {
		if s.rc != nil {
			s.rc.close()
		}
		err = s.r.Close()
	}
	if s.w != nil {
		if s.wc != nil {
			s.wc.close()
		}
		if e := s.w.Close(); err == nil {
			err = e
		}
	}
	return err
}

type migration struct {
	version int
	name    string
	sql     string
	// after runs in the migration's transaction, after its SQL.
	after func(ctx context.Context, tx *Tx, now int64) error
}

// afterMigration are the steps a migration needs beyond SQL.
var afterMigration = map[int]func(ctx context.Context, tx *Tx, now int64) error{5: sealAndIdentify}

func migrations() ([]migration, error) {
	ents, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range ents {
		n, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(n)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{v, e.Name(), string(b), afterMigration[v]})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int {
	ms, _ := migrations()
	return ms[len(ms)-1].version
}

// migrate runs each migration above version in its own immediate
// transaction (two processes opening an old file at once cannot both
// apply one), then switches the file to WAL. The switch comes last
// because it rewrites the header: a migration that fails leaves every
// byte of the file as it was.
func (s *Store) migrate(ctx context.Context, version int) error {
	migs, err := migrations()
	if err != nil {
		return err
	}
	last := migs[len(migs)-1].version
	for _, m := range migs {
		if m.version <= version {
			continue
		}
		err := s.write(ctx, func(tx *Tx) error {
			var v int
			if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
				return err
			}
			if v > last {
				return fmt.Errorf("%w: file has version %d, this build knows up to %d", ErrNewerSchema, v, last)
			}
			if v >= m.version {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if m.after != nil {
				if err := m.after(ctx, tx, tx.now); err != nil {
					return fmt.Errorf("migration %s: %w", m.name, err)
				}
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version))
			return err
		})
		if err != nil {
			return err
		}
	}
	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return mapDriverError(err)
	}
	if mode != "wal" {
		if _, err := s.w.ExecContext(ctx, "PRAGMA journal_mode = WAL"); err != nil {
			return mapDriverError(err)
		}
	}
	return nil
}

// write runs fn in one immediate transaction, retrying the whole
// transaction while another process holds the lock, until ctx ends. Retrying
// is safe because every write in this package is idempotent.
func (s *Store) write(ctx context.Context, fn func(*Tx) error) error {
	if s.w == nil {
		return fmt.Errorf("%w: ledger opened read-only", ErrReadOnly)
	}
	return s.explainIO(retryBusy(ctx, func() error { return s.writeOnce(ctx, fn) }))
}

// explainIO names the cause of an I/O error SQLite reports only by code
// when it is a write-ahead log removed under a live ledger (someone
// cleaned up a "stray" -wal file while tollgate had it open): rows in it
// may be lost, and nothing should write until an operator has looked.
func (s *Store) explainIO(err error) error {
	if err == nil || !isIOErr(err) {
		return err
	}
	// A short read of the WAL is what SQLite reports when the log is
	// shorter than the shared-memory index of the processes still open.
	if _, e := os.Stat(s.path + "-wal"); errors.Is(e, fs.ErrNotExist) || isShortRead(err) {
		return fmt.Errorf("ledger %s: the write-ahead log %s-wal was removed or cut while the ledger was open; "+
			"transactions committed to it may be lost: stop every tollgate process on this ledger, run 'tollgate verify', and restore from a backup if it fails (%w)",
			s.path, s.path, err)
	}
	return err
}

func (s *Store) writeOnce(ctx context.Context, fn func(*Tx) error) error {
	stx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer s.wc.fill(ctx)
	tx := &Tx{tx: stx, cache: s.wc, id: &s.id, now: toMS(s.now())}
	if err := fn(tx); err != nil {
		stx.Rollback()
		return err
	}
	return stx.Commit()
}

// read runs fn in a short read-only transaction on the reader pool, so that
// every query in fn sees one snapshot.
func (s *Store) read(ctx context.Context, fn func(*Tx) error) error {
	return s.explainIO(retryBusy(ctx, func() error { return s.readOnce(ctx, fn) }))
}

// retryBusy repeats once while it fails with lock contention, backing off
// up to 200ms between tries, until ctx ends.
func retryBusy(ctx context.Context, once func() error) error {
	backoff := 2 * time.Millisecond
	for {
		err := once()
		if err == nil || !isBusy(err) {
			return mapDriverError(err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", ErrBusy, ctx.Err())
		case <-time.After(backoff):
		}
		if backoff < 200*time.Millisecond {
			backoff *= 2
		}
	}
}

func (s *Store) readOnce(ctx context.Context, fn func(*Tx) error) error {
	stx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.rc.fill(ctx)
	defer stx.Rollback()
	return fn(&Tx{tx: stx, cache: s.rc, now: toMS(s.now())})
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

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

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
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
	// OneShot is for a process that makes one call and exits (the CLI):
	// only the writer connection is opened (retries are read on it outside
	// a transaction), so the schema is parsed once, which costs more than
	// the call itself with modernc.org/sqlite; statements are prepared per
	// transaction, not kept for reuse.
	OneShot bool
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
}

// Path returns the ledger file path.
func (s *Store) Path() string { return s.path }

// DefaultPath returns the ledger path chosen when neither --db nor
// TOLLGATE_DB is given: tollgate/ledger.db under the XDG data directory.
func DefaultPath() (string, error) {
	if v := os.Getenv("TOLLGATE_DB"); v != "" {
		return v, nil
	}
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no ledger path: set --db or TOLLGATE_DB (%v)", err)
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "tollgate", "ledger.db"), nil
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
		q.Add("_pragma", "journal_mode(WAL)")
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

// Open opens (creating if needed) the ledger at path and migrates it.
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
	s := &Store{path: path, now: opt.Now, ro: opt.ReadOnly, one: opt.OneShot && !opt.ReadOnly}
	if opt.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("open ledger: %w", err)
		}
	} else if err := createFile(path); err != nil {
		return nil, err
	}
	var err error
	s.r, err = sql.Open("sqlite", dsn(path, opt.BusyTimeout, false))
	if err != nil {
		return nil, err
	}
	s.r.SetMaxOpenConns(4)
	s.rc = newStmtCache(s.r, s.one)
	s.r.SetConnMaxIdleTime(time.Minute)
	if !opt.ReadOnly {
		s.w, err = sql.Open("sqlite", dsn(path, opt.BusyTimeout, true))
		if err != nil {
			s.r.Close()
			return nil, err
		}
		s.w.SetMaxOpenConns(1)
		s.wc = newStmtCache(s.w, s.one)
		if err := s.migrate(ctx); err != nil {
			s.Close()
			return nil, err
		}
	} else if err := s.checkVersion(ctx); errors.Is(err, ErrReadOnly) {
		s.r.Close()
		if s.r, err = sql.Open("sqlite", dsnWith(path, opt.BusyTimeout, false, true)); err != nil {
			return nil, err
		}
		s.r.SetMaxOpenConns(4)
		s.rc = newStmtCache(s.r, s.one)
		if err := s.checkVersion(ctx); err != nil {
			s.Close()
			return nil, err
		}
	} else if err != nil {
		s.Close()
		return nil, err
	}
	if s.one {
		return s, nil // fastLookup asks the writer connection, unprepared
	}
	if s.fast, err = s.r.PrepareContext(ctx, fastQuery); err != nil {
		s.Close()
		return nil, fmt.Errorf("open ledger %s: %w", path, mapDriverError(err))
	}
	return s, nil
}

// createFile creates a missing ledger with mode 0600 in a 0700 folder. The
// file is created before any SQLite connection of this process exists, so
// opening and closing it here cannot drop a POSIX lock SQLite holds.
func createFile(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("%w: create ledger folder: %v", ErrReadOnly, err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: create ledger: %v", ErrReadOnly, err)
	}
	return f.Close()
}

// Close releases both pools.
func (s *Store) Close() error {
	// Readers first: the last connection to close checkpoints the WAL into
	// the file and removes it, and a read-only one cannot, which would leave
	// the next process to read the whole WAL back before its first query.
	if s.fast != nil {
		s.fast.Close()
	}
	s.rc.close()
	err := s.r.Close()
	if s.w != nil {
		s.wc.close()
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
}

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
		ms = append(ms, migration{v, e.Name(), string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int {
	ms, _ := migrations()
	return ms[len(ms)-1].version
}

func (s *Store) checkVersion(ctx context.Context) error {
	var v int
	if err := s.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("open ledger %s: %w", s.path, mapDriverError(err))
	}
	if v > SchemaVersion() {
		return fmt.Errorf("%w: file has version %d, this build knows up to %d", ErrNewerSchema, v, SchemaVersion())
	}
	if v < SchemaVersion() {
		return fmt.Errorf("%w: ledger %s has schema version %d, this build writes %d", ErrNeedsMigration, s.path, v, SchemaVersion())
	}
	return nil
}

// migrate runs each pending migration in its own immediate transaction, so
// two processes opening a new file at once cannot both apply one.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	// The common case, an up-to-date ledger, is answered by one read; the
	// write lock is taken only when there is work to do. A one-shot
	// process asks its writer connection, the only one it will open.
	db := s.r
	if s.one {
		db = s.w
	}
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err == nil && v == ms[len(ms)-1].version {
		return nil
	}
	for _, m := range ms {
		err := s.write(ctx, func(tx *Tx) error {
			var v int
			if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
				return err
			}
			if v > ms[len(ms)-1].version {
				return fmt.Errorf("%w: file has version %d, this build knows up to %d", ErrNewerSchema, v, ms[len(ms)-1].version)
			}
			if v >= m.version {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version))
			return err
		})
		if err != nil {
			return fmt.Errorf("open ledger %s: %w", s.path, err)
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
	return retryBusy(ctx, func() error { return s.writeOnce(ctx, fn) })
}

func (s *Store) writeOnce(ctx context.Context, fn func(*Tx) error) error {
	stx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer s.wc.fill(ctx)
	tx := &Tx{tx: stx, cache: s.wc}
	if err := fn(tx); err != nil {
		stx.Rollback()
		return err
	}
	return stx.Commit()
}

// read runs fn in a short read-only transaction on the reader pool, so that
// every query in fn sees one snapshot.
func (s *Store) read(ctx context.Context, fn func(*Tx) error) error {
	return retryBusy(ctx, func() error { return s.readOnce(ctx, fn) })
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
	return fn(&Tx{tx: stx, cache: s.rc})
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

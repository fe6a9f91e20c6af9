// Package sqlite is tollgate's default storage engine: one ledger file
// shared by every process on a host, through modernc.org/sqlite (no cgo).
// It implements engine.Engine; everything SQLite-specific lives here (the
// file checks and atomic creation, the pragmas, the schema and its
// migrations, result codes, data_version, integrity_check, VACUUM INTO),
// so that the state machine in package ledger reads as plain SQL.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// ApplicationID is SQLite's application_id of a tollgate ledger ("Tlgt"),
// so that file(1) and tollgate itself can tell one from other databases.
const ApplicationID = 0x546c6774

// Options configures Open.
type Options struct {
	// BusyTimeout is how long one statement waits for another process's
	// lock before the caller's retry loop takes over. Zero means 5s.
	BusyTimeout time.Duration
	// ReadOnly opens only the reader pool: no migration, no write.
	ReadOnly bool
	// Existing writes to a ledger that must already exist at this
	// build's schema: it neither creates nor migrates one.
	Existing bool
	// After is the state machine's step of a migration that needs one.
	After engine.Migration
	// WriterQueue orders this engine's writers through the writer queue
	// (queue.go) before SQLite's lock. Off by default until a console stall
	// seen under the race detector with it on is understood.
	WriterQueue bool
}

// Engine is an open SQLite ledger.
type Engine struct {
	path string
	w    *sql.DB // one connection, BEGIN IMMEDIATE
	r    *sql.DB // readers, query_only
	q    *writerQueue
	// writer: opened by a writing command, whose read-only failures are
	// explained (explainReadOnly) once they happen.
	writer bool
}

var _ engine.Engine = (*Engine)(nil)

// Open opens the ledger file at path. A writing engine creates a missing
// ledger and migrates a tollgate ledger of an older schema or a file that
// holds only the seed fixture's intents table; a read-only one never
// creates, migrates or changes a file. Anything else (an empty file,
// another application's SQLite database, a file that is not SQLite, a
// directory, a device, a dangling link) is refused with an error that
// names it, and its bytes stay as they were.
func Open(ctx context.Context, path string, opt Options) (*Engine, error) {
	if opt.BusyTimeout == 0 {
		opt.BusyTimeout = 5 * time.Second
	}
	path, exists, err := checkPath(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		if opt.ReadOnly || opt.Existing {
			return nil, fmt.Errorf("%w: no ledger at %s (a reading command never creates one)", engine.ErrNoLedger, path)
		}
		if err := createLedger(ctx, path, opt); err != nil {
			return nil, err
		}
		// Whoever won the race to create it, the file there now is
		// checked like any other.
		if path, _, err = checkPath(path); err != nil {
			return nil, err
		}
	}
	if !opt.ReadOnly {
		if err := checkOwnerReadOnly(path); err != nil {
			return nil, err
		}
	}
	e := &Engine{path: path, writer: !opt.ReadOnly}
	if err := e.openPools(ctx, opt); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// dsn builds the connection string. Pragmas go here because they are per
// connection: a pool opens connections whenever it likes. immutable is
// for a ledger nothing can write (readMode decides): SQLite then reads the
// file alone, without the side files it would otherwise create.
func dsn(path string, busy time.Duration, writer, immutable bool) string {
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

// WriterDSN is the connection string of a writing connection to path,
// with the engine's pragmas: for benchmarks that compare a bare insert
// with tollgate's own on equal terms.
func WriterDSN(path string) string { return dsn(path, 5*time.Second, true, false) }

// openWriter opens the pool of one writing connection.
func openWriter(path string, opt Options) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, opt.BusyTimeout, true, false))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// openPools identifies the file through the first connection it opens
// (which changes nothing), migrates it if this engine may write, and then
// opens the rest.
func (e *Engine) openPools(ctx context.Context, opt Options) error {
	var err error
	if opt.ReadOnly {
		var immutable bool
		if immutable, err = readMode(e.path); err != nil {
			return err
		}
		e.r, err = sql.Open("sqlite", dsn(e.path, opt.BusyTimeout, false, immutable))
	} else {
		e.w, err = openWriter(e.path, opt)
	}
	if err != nil {
		return err
	}
	db := e.r
	if !opt.ReadOnly {
		db = e.w
	}
	kind, version, err := identify(ctx, db)
	err = e.MapError(err)
	if err != nil {
		return fmt.Errorf("open ledger %s: %w", e.path, err)
	}
	if err := kind.refusal(e.path, version); err != nil {
		return err
	}
	if (opt.ReadOnly || opt.Existing) && kind != kindLedger {
		return fmt.Errorf("%w: ledger %s has schema version %d, this build reads %d; run 'tollgate migrate' (or any writing command) first",
			engine.ErrNeedsMigration, e.path, version, schemaVersion())
	}
	if !opt.ReadOnly {
		if opt.WriterQueue {
			e.q = newWriterQueue(e.path)
		}
		if kind != kindLedger {
			if err := e.migrate(ctx, kind, version, opt.After); err != nil {
				return fmt.Errorf("open ledger %s: %w", e.path, err)
			}
		}
		// sql.Open connects lazily: a one-shot process that only guards
		// never opens a reader connection.
		if e.r, err = sql.Open("sqlite", dsn(e.path, opt.BusyTimeout, false, false)); err != nil {
			return err
		}
	}
	e.r.SetMaxOpenConns(4)
	e.r.SetConnMaxIdleTime(time.Minute)
	return nil
}

// identify reads the header fields and table names in one statement.
func identify(ctx context.Context, db *sql.DB) (fileKind, int, error) {
	var app, version int
	var names sql.NullString
	err := db.QueryRowContext(ctx, `SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version),
		(SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name))`).
		Scan(&app, &version, &names)
	if err != nil {
		return 0, 0, err
	}
	var tables []string
	if names.String != "" {
		tables = strings.Split(names.String, ",")
	}
	return classify(app, version, tables), version, nil
}

// Name implements engine.Engine.
func (e *Engine) Name() string { return "sqlite" }

// Location implements engine.Engine: the file's path.
func (e *Engine) Location() string { return e.path }

// Writer implements engine.Engine.
func (e *Engine) Writer() *sql.DB { return e.w }

// Reader implements engine.Engine.
func (e *Engine) Reader() *sql.DB { return e.r }

// Rebind implements engine.Engine: SQLite takes ? as written.
func (e *Engine) Rebind(q string) string { return q }

// LockSuffix implements engine.Engine: an immediate transaction already
// holds the only write lock, so a row read in it cannot change under it.
func (e *Engine) LockSuffix() string { return "" }

// WriteTurn implements engine.Engine: the writer queue, where there is one.
func (e *Engine) WriteTurn(ctx context.Context) (func(), error) {
	if e.q == nil {
		return func() {}, nil
	}
	return e.q.acquire(ctx)
}

// IndexedBy implements engine.Engine with SQLite's INDEXED BY.
func (e *Engine) IndexedBy(index string) string { return " INDEXED BY " + index }

// RowCount implements engine.Engine: ids are dense in SQLite.
func (e *Engine) RowCount(table string) string {
	return "(SELECT coalesce(max(id), 0) FROM " + table + ")"
}

// Clock implements engine.Engine: on one host the process's clock (the
// store's, which tests move) is the ledger's.
func (e *Engine) Clock(context.Context, *sql.Tx) (time.Time, error) { return time.Time{}, nil }

// SchemaVersion implements engine.Engine.
func (e *Engine) SchemaVersion() int { return schemaVersion() }

// Close releases both pools.
func (e *Engine) Close() error {
	// Readers first: the last connection to close checkpoints the WAL into
	// the file and removes it, and a read-only one cannot, which would leave
	// the next process to read the whole WAL back before its first query.
	var err error
	if e.r != nil {
		err = e.r.Close()
	}
	if e.q != nil {
		defer e.q.close()
	}
	if e.w != nil {
		if e2 := e.w.Close(); err == nil {
			err = e2
		}
	}
	return err
}

// MapError implements engine.Engine. It matches SQLite's result codes,
// never message text, so that it survives driver and SQLite upgrades, and
// names the cause of an I/O error SQLite reports only by code when it is
// a write-ahead log removed under a live ledger.
func (e *Engine) MapError(err error) error {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	switch code := se.Code(); {
	case code == sqlite3.SQLITE_CONSTRAINT_TRIGGER:
		return fmt.Errorf("%w: %v", engine.ErrAppendOnly, err)
	case code&0xff == sqlite3.SQLITE_BUSY, code&0xff == sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%w: %v", engine.ErrBusy, err)
	case code&0xff == sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: %v", engine.ErrNotLedger, err)
	case code&0xff == sqlite3.SQLITE_READONLY, code&0xff == sqlite3.SQLITE_CANTOPEN, code&0xff == sqlite3.SQLITE_PERM:
		if e.writer {
			// Asked now that it failed, never before (checkOwnerReadOnly).
			return explainReadOnly(e.path, fmt.Errorf("%w: %v", engine.ErrReadOnly, err))
		}
		return fmt.Errorf("%w: %v", engine.ErrReadOnly, err)
	case code&0xff == sqlite3.SQLITE_FULL:
		return fmt.Errorf("%w: %v", engine.ErrReadOnly, err)
	case code&0xff == sqlite3.SQLITE_IOERR:
		return e.explainIO(err, code == sqlite3.SQLITE_IOERR_SHORT_READ)
	}
	return err
}

// explainIO names a write-ahead log removed or cut while the ledger was
// open (someone cleaned up a "stray" -wal file): rows in it may be lost,
// and nothing should write until an operator has looked. A short read of
// the WAL is what SQLite reports when the log is shorter than the
// shared-memory index of the processes still open.
func (e *Engine) explainIO(err error, shortRead bool) error {
	if _, statErr := os.Stat(e.path + "-wal"); errors.Is(statErr, fs.ErrNotExist) || shortRead {
		return fmt.Errorf("ledger %s: the write-ahead log %s-wal was removed or cut while the ledger was open; "+
			"transactions committed to it may be lost: stop every tollgate process on this ledger, run 'tollgate verify', and restore from a backup if it fails (%w)",
			e.path, e.path, err)
	}
	return err
}

// Retryable implements engine.Engine: lock contention.
func (e *Engine) Retryable(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return false
}

// Integrity implements engine.Engine with PRAGMA integrity_check.
func (e *Engine) Integrity(ctx context.Context, tx *sql.Tx) (string, error) {
	var s string
	err := tx.QueryRowContext(ctx, "PRAGMA integrity_check(1)").Scan(&s)
	return s, err
}

// Watch implements engine.Engine with PRAGMA data_version, which is per
// connection: the watch holds one connection of its own.
func (e *Engine) Watch(ctx context.Context) (engine.Watch, error) {
	c, err := e.r.Conn(ctx)
	if err != nil {
		return nil, e.MapError(err)
	}
	return &watch{e: e, conn: c, last: -1}, nil
}

type watch struct {
	e    *Engine
	mu   sync.Mutex
	conn *sql.Conn
	last int64
}

func (w *watch) Changed(ctx context.Context) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var v int64
	if err := w.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return false, w.e.MapError(err)
	}
	changed := v != w.last
	w.last = v
	return changed, nil
}

func (w *watch) Close() error { return w.conn.Close() }

// migrate carries a ledger of an older schema to this build's: one that
// holds only the seed fixture's table is made a ledger around its rows,
// one at the last development schema is carried to the baseline, and
// then each migration above the file's version runs in its own immediate
// transaction (two processes opening an old file at once cannot both
// apply one). The file then switches to WAL, last, because that rewrites
// the header: a migration that fails leaves every byte as it was.
func (e *Engine) migrate(ctx context.Context, kind fileKind, version int, after engine.Migration) error {
	switch {
	case kind == kindFixture:
		return e.create(ctx, after)
	case version == DevLast:
		if err := e.fromDevelopment(ctx); err != nil {
			return err
		}
	case version < engine.Baseline:
		return developmentRefusal(e.path, version)
	}
	migs, err := migrations()
	if err != nil {
		return err
	}
	last := schemaVersion()
	for _, m := range migs {
		if m.Version <= version {
			continue
		}
		err := e.retry(ctx, func() error { return e.migrateOne(ctx, m, last, after) })
		if err != nil {
			return err
		}
	}
	return e.walMode(ctx)
}

// walMode switches the file to WAL, last: it rewrites the header.
func (e *Engine) walMode(ctx context.Context) error {
	var mode string
	if err := e.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return e.MapError(err)
	}
	if mode != "wal" {
		if _, err := e.w.ExecContext(ctx, "PRAGMA journal_mode = WAL"); err != nil {
			return e.MapError(err)
		}
	}
	return nil
}

func (e *Engine) migrateOne(ctx context.Context, m engine.Step, last int, after engine.Migration) (err error) {
	conn, err := e.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if strings.Contains(m.SQL, "DROP TABLE") {
		// A migration that rebuilds a table others refer to drops it and
		// renames a copy into its place.
		// SQLite's way is with foreign keys off, which takes effect only
		// outside a transaction: with them on, the drop would delete every
		// row that refers to it, or fail. The copy keeps every key, so every
		// reference still holds after it.
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
			return err
		}
		defer func() {
			// The open fails if the connection cannot have them back.
			if _, ferr := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON"); ferr != nil && err == nil {
				err = ferr
			}
		}()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > last {
		return fmt.Errorf("%w: file has version %d, this build knows up to %d", engine.ErrNewerSchema, v, last)
	}
	if v >= m.Version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if after != nil {
		if err := after(ctx, tx, m.Version); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.Version)); err != nil {
		return err
	}
	return tx.Commit()
}

// retry runs once again while it fails with lock contention, until ctx
// ends.
func (e *Engine) retry(ctx context.Context, once func() error) error {
	return engine.Retry(ctx, e, once)
}

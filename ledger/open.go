package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// ApplicationID is SQLite's application_id of a tollgate ledger ("Tlgt"),
// so that file(1) and tollgate itself can tell one from other databases.
const ApplicationID = 0x546c6774

// fileKind is what a path holds, as far as opening a ledger is concerned.
type fileKind int

const (
	kindMissing  fileKind = iota
	kindLedger            // a tollgate ledger at this build's schema
	kindOlder             // a tollgate ledger of an older schema
	kindFixture           // only the seed fixture's intents table
	kindNewer             // a tollgate ledger of a newer schema
	kindSQLiteDB          // another application's SQLite database
)

// checkPath refuses what can never be a ledger file, before SQLite sees
// it: a directory, a device, a socket or pipe, a dangling symbolic link,
// an empty file. It returns the path to open (a link resolved) and
// whether the file exists.
func checkPath(path string) (string, bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("%w: ledger %s: %v", ErrReadOnly, path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", false, fmt.Errorf("%w: ledger %s is a symbolic link to nothing (dangling); give the real path", ErrNotLedger, path)
		}
		if fi, err = os.Stat(target); err != nil {
			return "", false, fmt.Errorf("%w: ledger %s: %v", ErrReadOnly, path, err)
		}
		path = target
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		return "", false, fmt.Errorf("%w: ledger %s is a directory; give a file path such as %s", ErrNotLedger, path, filepath.Join(path, "ledger.db"))
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "", false, fmt.Errorf("%w: ledger %s is a device, not a file", ErrNotLedger, path)
	case !m.IsRegular():
		return "", false, fmt.Errorf("%w: ledger %s is not a regular file (%s)", ErrNotLedger, path, m.Type())
	case fi.Size() == 0:
		return "", false, fmt.Errorf("%w: %s is an empty file, not a ledger; remove it and tollgate creates a new ledger there", ErrNotLedger, path)
	}
	return path, true, nil
}

// classify names a file by its header and tables. Ledgers made before
// schema 5 carry no application id, so they are known by their tables.
func classify(app, version int, tables []string) fileKind {
	switch {
	case app == ApplicationID && version > SchemaVersion():
		return kindNewer
	case app == ApplicationID && version == SchemaVersion():
		return kindLedger
	case app == ApplicationID:
		return kindOlder
	case app != 0:
		return kindSQLiteDB
	case version == 0 && slices.Equal(tables, []string{"intents"}):
		return kindFixture
	case version > 0 && version < 5 && slices.Contains(tables, "intents") && slices.Contains(tables, "events") && slices.Contains(tables, "action_index"):
		return kindOlder
	}
	return kindSQLiteDB
}

func (k fileKind) refusal(path string, version int) error {
	switch k {
	case kindNewer:
		return fmt.Errorf("%w: ledger %s has schema version %d, this build knows up to %d", ErrNewerSchema, path, version, SchemaVersion())
	case kindSQLiteDB:
		return fmt.Errorf("%w: %s is an SQLite database of another application, not a tollgate ledger; it was left as it is", ErrNotLedger, path)
	}
	return nil
}

// createLedger makes a new ledger at path so that it appears complete or
// not at all: the schema is written to a temporary file in the same
// folder, which is then linked into place (a link never replaces a file,
// so two processes creating one ledger at once both end up opening the
// one that won).
func createLedger(ctx context.Context, path string, opt Options) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("%w: create ledger folder: %v", ErrReadOnly, err)
		}
	}
	f, err := os.CreateTemp(dir, ".tollgate-new-*.db")
	if err != nil {
		return fmt.Errorf("%w: create ledger: %v", ErrReadOnly, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("%w: create ledger: %v", ErrReadOnly, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	s := &Store{path: tmp, now: opt.Now}
	if s.w, err = sql.Open("sqlite", dsn(tmp, opt.BusyTimeout, true)); err != nil {
		return err
	}
	s.w.SetMaxOpenConns(1)
	s.wc = newStmtCache(s.w, true)
	err = s.migrate(ctx, 0)
	if e := s.w.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("create ledger %s: %w", path, err)
	}
	for _, side := range []string{"-wal", "-shm"} {
		os.Remove(tmp + side)
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: create ledger: %v", ErrReadOnly, err)
	}
	return syncDir(dir)
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some file systems cannot sync a folder; the link is then as durable
	// as they make it.
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// ledgerID is the ledger's identity, fixed at creation.
func ledgerID(ctx context.Context, tx *Tx) (string, error) {
	if tx.id != nil {
		tx.id.mu.Lock()
		defer tx.id.mu.Unlock()
		if tx.id.id != "" {
			return tx.id.id, nil
		}
	}
	var id string
	err := tx.QueryRowContext(ctx, "SELECT ledger_id FROM ledger_meta").Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: the ledger has no identity row (ledger_meta is empty)", ErrNotLedger)
	}
	if err == nil && tx.id != nil {
		tx.id.id = id
	}
	return id, err
}

// sealAndIdentify is migration 5's step in Go: it seals every fact row
// written before events committed their rows, then gives the ledger its
// identity, as a fact of its own, and its application id.
func sealAndIdentify(ctx context.Context, tx *Tx, now int64) error {
	if err := sealFacts(ctx, tx, now); err != nil {
		return err
	}
	id := newUUID()
	ref, err := insertFact(ctx, tx, "ledger_meta", "one, ledger_id, created_ms", 1, id, now)
	if err != nil {
		return err
	}
	if err := appendEvent(ctx, tx, "", evLedgerCreated, "tollgate", map[string]any{"ledger_id": id}, now, &ref); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID))
	return err
}

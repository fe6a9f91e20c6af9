package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// fileKind is what a path holds, as far as opening a ledger is concerned.
type fileKind int

const (
	kindLedger   fileKind = iota + 1 // a tollgate ledger at this build's schema
	kindOlder                        // a tollgate ledger of an older schema
	kindFixture                      // only the seed fixture's intents table
	kindNewer                        // a tollgate ledger of a newer schema
	kindSQLiteDB                     // another application's SQLite database
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
		return "", false, fmt.Errorf("%w: ledger %s: %v", engine.ErrReadOnly, path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", false, fmt.Errorf("%w: ledger %s is a symbolic link to nothing (dangling); give the real path", engine.ErrNotLedger, path)
		}
		if fi, err = os.Stat(target); err != nil {
			return "", false, fmt.Errorf("%w: ledger %s: %v", engine.ErrReadOnly, path, err)
		}
		path = target
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		return "", false, fmt.Errorf("%w: ledger %s is a directory; give a file path such as %s", engine.ErrNotLedger, path, filepath.Join(path, "ledger.db"))
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "", false, fmt.Errorf("%w: ledger %s is a device, not a file", engine.ErrNotLedger, path)
	case !m.IsRegular():
		return "", false, fmt.Errorf("%w: ledger %s is not a regular file (%s)", engine.ErrNotLedger, path, m.Type())
	case fi.Size() == 0:
		return "", false, fmt.Errorf("%w: %s is an empty file, not a ledger; remove it and tollgate creates a new ledger there", engine.ErrNotLedger, path)
	}
	return path, true, nil
}

// classify names a file by its header and tables. Ledgers made before
// schema 5 carry no application id, so they are known by their tables.
func classify(app, version int, tables []string) fileKind {
	switch {
	case app == ApplicationID && version > schemaVersion():
		return kindNewer
	case app == ApplicationID && version == schemaVersion():
		return kindLedger
	case app == ApplicationID:
		return kindOlder
	case app != 0:
		return kindSQLiteDB
	case version == 0 && slices.Equal(tables, []string{"intents"}):
		return kindFixture
	case version > 0 && version < identified && slices.Contains(tables, "intents") && slices.Contains(tables, "events") && slices.Contains(tables, "action_index"):
		return kindOlder
	}
	return kindSQLiteDB
}

func (k fileKind) refusal(path string, version int) error {
	switch k {
	case kindNewer:
		return fmt.Errorf("%w: ledger %s has schema version %d, this build knows up to %d", engine.ErrNewerSchema, path, version, schemaVersion())
	case kindSQLiteDB:
		return fmt.Errorf("%w: %s is an SQLite database of another application, not a tollgate ledger; it was left as it is", engine.ErrNotLedger, path)
	case kindOlder:
		if version < engine.Baseline && version != DevLast {
			return developmentRefusal(path, version)
		}
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
			return fmt.Errorf("%w: create ledger folder: %v", engine.ErrReadOnly, err)
		}
	}
	tmp, err := newTemp(dir, ".tollgate-new-*.db")
	if err != nil {
		return fmt.Errorf("%w: create ledger: %v", engine.ErrReadOnly, err)
	}
	defer os.Remove(tmp)
	e := &Engine{path: tmp}
	if e.w, err = openWriter(tmp, opt); err != nil {
		return err
	}
	err = e.create(ctx, opt.After)
	if err2 := e.w.Close(); err == nil {
		err = err2
	}
	if err != nil {
		return fmt.Errorf("create ledger %s: %w", path, err)
	}
	for _, side := range []string{"-wal", "-shm"} {
		os.Remove(tmp + side)
	}
	err = publish(tmp, path, func(err error) error { return err })
	if errors.Is(err, fs.ErrExist) {
		// Another process made the ledger first: this one opens that
		// (the caller checks the path again), so every process creating
		// the ledger at once ends up on the same file.
		awaitFilled(ctx, path, opt.BusyTimeout)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: create ledger %s: %v", engine.ErrReadOnly, path, err)
	}
	return nil
}

// awaitFilled waits, until wait has passed or ctx ends, while path is an
// empty file: a process that lost the race to create the ledger to one
// that creates it in place (the seed fixture's local_ledger.py, say)
// would otherwise refuse the winner's file as empty in the instant
// before its header is written. Open checks the path again afterwards.
func awaitFilled(ctx context.Context, path string, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() > 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// newTemp creates an empty file only its owner can read, in dir.
func newTemp(dir, pattern string) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// publish syncs tmp and links it to dest, then syncs the folder: dest
// appears complete or not at all, and an existing dest is never replaced.
func publish(tmp, dest string, linkErr func(error) error) error {
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Link(tmp, dest); err != nil {
		return linkErr(err)
	}
	return syncDir(filepath.Dir(dest))
}

// Backup implements engine.Engine with VACUUM INTO, which reads one
// snapshot while other processes keep writing. The copy is written to a
// temporary file beside dest, synced, and linked into place: a backup
// killed midway leaves nothing at dest, and an existing dest is never
// replaced. A symbolic link, directory or device as dest is refused by
// name.
func (e *Engine) Backup(ctx context.Context, dest string) error {
	if e.w == nil {
		return fmt.Errorf("%w: backup needs a ledger connection that is not query-only", engine.ErrReadOnly)
	}
	if fi, err := os.Lstat(dest); err == nil {
		what := "a file"
		switch m := fi.Mode(); {
		case m&fs.ModeSymlink != 0:
			what = "a symbolic link"
		case m.IsDir():
			what = "a directory"
		case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
			what = "a device"
		}
		return fmt.Errorf("%w: backup target %s already exists (%s); a backup never replaces anything", engine.ErrInvalidInput, dest, what)
	}
	tmp, err := newTemp(filepath.Dir(dest), ".tollgate-backup-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp)
	// VACUUM INTO wants a file that does not exist or is empty.
	err = e.retry(ctx, func() error {
		_, err := e.w.ExecContext(ctx, "VACUUM INTO ?", tmp)
		return err
	})
	if err != nil {
		return err
	}
	return publish(tmp, dest, func(err error) error {
		return fmt.Errorf("%w: backup target %s: %v", engine.ErrInvalidInput, dest, err)
	})
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

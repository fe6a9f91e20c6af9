package sqlite

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// A WAL ledger has two side files: the write-ahead log (-wal) and its
// shared-memory index (-shm). A connection that finds either missing
// creates it, owned by whoever runs it, with the ledger file's mode; a
// reader that did so beside a read-only ledger would leave files the
// owner's later writes trip over. So how a reader opens the file, and
// whether a writer may, is decided here from the files as they are,
// before SQLite sees them.

// sides is what the folder holds beside a ledger file.
type sides struct {
	file, dir fs.FileInfo
	wal, shm  fs.FileInfo // nil when missing
}

func statSides(path string) (sides, error) {
	var s sides
	var err error
	if s.file, err = os.Stat(path); err != nil {
		return s, fmt.Errorf("%w: ledger %s: %v", engine.ErrReadOnly, path, err)
	}
	if s.dir, err = os.Stat(filepath.Dir(path)); err != nil {
		return s, fmt.Errorf("%w: ledger %s: %v", engine.ErrReadOnly, path, err)
	}
	s.wal, _ = os.Stat(path + "-wal")
	s.shm, _ = os.Stat(path + "-shm")
	return s, nil
}

// noWriteBits is true when a file's mode lets nobody write it: the
// owner's own way of saying read-only, which root would otherwise pass.
func noWriteBits(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o222 == 0 }

// frozen reports that nothing can write the ledger while the side files
// are as they are: its file or its folder has no write bits, or it is on
// a read-only mount. A file without write bits cannot be opened for
// writing by any process bar root (and tollgate's writers refuse it);
// in a folder without write bits no writer can make the side file it
// lacks, and at least one is missing whenever this is asked.
func (s sides) frozen(path string) bool {
	return noWriteBits(s.file) || noWriteBits(s.dir) || onReadOnlyMount(path)
}

// readMode decides how a reader opens the ledger at path so that it
// creates no file and sees every committed row:
//
//   - both side files exist, the log holds no rows and nothing can write:
//     immutable (as below), whoever owns the side files;
//   - both side files exist and this user may read them: as SQLite's
//     read-only connection (mode=ro),
//     which since 3.22 reads a log and index it cannot write, and sees
//     writers' commits as they happen;
//   - a side file is missing, the log holds no rows and nothing can
//     write: immutable, which reads the file alone without locks (safe
//     only because nothing can change it);
//   - a side file is missing and this process may write the ledger and
//     its folder: mode=ro, letting SQLite make the missing one as any
//     writer of the ledger would (with the file's mode; run as root,
//     SQLite hands it to the file's owner). A live reader needs it to
//     see other processes' commits, and it is the file a writer would
//     make, so nothing is left that a writer could trip over;
//   - otherwise it refuses, naming what is missing: reading the file
//     alone could miss rows still in the log, or read a page while a
//     writer checkpoints into it.
func readMode(path string) (immutable bool, err error) {
	s, err := statSides(path)
	if err != nil {
		return false, err
	}
	logRows := s.wal != nil && s.wal.Size() > 0
	if s.wal != nil && s.shm != nil {
		// With no rows in the log and nothing able to write, the file
		// alone is the whole ledger: read it so, touching neither side
		// file (a writer's 0600 ones another user cannot open, issue 42,
		// and which SQLite would otherwise open and may re-create).
		if !logRows && s.frozen(path) {
			return true, nil
		}
		if mayRead(path+"-wal") && mayRead(path+"-shm") {
			return false, nil
		}
		if logRows {
			return false, fmt.Errorf("%w: ledger %s has rows in its write-ahead log %s-wal (%d bytes, mode %04o), which this user may not read, so reading the file alone would miss them; "+
				"read it as the log's owner, or have the owner make the side files readable (chmod a+r %s-wal %s-shm) or open and close the ledger once with a writing command (which folds the log into the file)",
				engine.ErrReadOnly, path, path, s.wal.Size(), s.wal.Mode().Perm(), path, path)
		}
		return false, fmt.Errorf("%w: ledger %s can still be written, and this user may not read its %s-wal and %s-shm files (modes %04o, %04o), without which a reader cannot see a writer's commits safely; "+
			"read it as their owner, or have the owner make them readable (chmod a+r)",
			engine.ErrReadOnly, path, path, path, s.wal.Mode().Perm(), s.shm.Mode().Perm())
	}
	frozen := s.frozen(path)
	switch {
	case !logRows && frozen:
		return true, nil
	case !frozen && mayWrite(path) && mayWrite(filepath.Dir(path)):
		return false, nil
	case logRows:
		return false, fmt.Errorf("%w: ledger %s has a write-ahead log (%s-wal, %d bytes) but no %s-shm, which SQLite needs to read the log and which a reader does not create "+
			"where the ledger is read-only; have its owner open it once with a writing command (which folds the log into the file), or copy the folder to writable storage",
			engine.ErrReadOnly, path, path, s.wal.Size(), path)
	}
	return false, fmt.Errorf("%w: ledger %s is writable by others but this user cannot make the %s-wal and %s-shm files that reading it safely needs; "+
		"read it as its owner, or while a process of its owner has it open",
		engine.ErrReadOnly, path, path, path)
}

// checkOwnerReadOnly refuses, before anything is opened, a ledger that
// stays read-only whatever other processes do: a file on a read-only
// mount, a file its owner left without write bits (root would otherwise
// write it), a file this user may not write. None of these changes while
// processes open and close the ledger. The side files do: SQLite creates
// them when the first connection opens and removes them when the last
// closes, so whether they exist or are writable is never asked before
// the open (a check made then is stale by the time SQLite acts, and
// called a writable ledger read-only under contention, issue 42).
// explainReadOnly names their part after a write has failed.
func checkOwnerReadOnly(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: ledger %s: %v", engine.ErrReadOnly, path, err)
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: ledger %s: %v", engine.ErrReadOnly, path, err)
	}
	switch {
	case onReadOnlyMount(path):
		return fmt.Errorf("%w: ledger %s is read-only: it is on a read-only file system", engine.ErrReadOnly, path)
	case noWriteBits(fi):
		return refuseWrite(path, "the file has no write permission", fi)
	case !mayWrite(path):
		return refuseWrite(path, "this user may not write the file", fi)
	case noWriteBits(di) || !mayWrite(dir):
		// A writer creates the -wal and -shm files whenever it is the
		// first to open the ledger: in this folder it could write only
		// while another process holds them, which is a race.
		return refuseWrite(path, "its folder "+dir+", where SQLite creates "+path+"-wal and "+path+"-shm, is not writable", di)
	}
	return nil
}

func refuseWrite(path, what string, fi fs.FileInfo) error {
	return fmt.Errorf("%w: ledger %s is read-only: %s (mode %04o); a writing command needs it writable: make it so (chmod u+w), or use a reading command",
		engine.ErrReadOnly, path, what, fi.Mode().Perm())
}

// explainReadOnly is why a writer's open or write of the ledger at path
// failed as read-only (cause), asked after the failure: the first thing
// found that stops this user writing, or cause itself when the files
// are writable now (a side file that came and went).
func explainReadOnly(path string, cause error) error {
	if err := checkOwnerReadOnly(path); err != nil {
		return fmt.Errorf("%w (%v)", err, cause)
	}
	s, err := statSides(path)
	if err != nil {
		return fmt.Errorf("%w (%v)", err, cause)
	}
	for _, side := range []struct {
		name string
		fi   fs.FileInfo
	}{{"-wal", s.wal}, {"-shm", s.shm}} {
		if side.fi == nil {
			if noWriteBits(s.dir) || !mayWrite(filepath.Dir(path)) {
				return fmt.Errorf("%w (%v)", refuseWrite(path, "its folder "+filepath.Dir(path)+", where SQLite must create "+path+side.name+", is not writable", s.dir), cause)
			}
			continue
		}
		if noWriteBits(side.fi) || !mayWrite(path+side.name) {
			return fmt.Errorf("%w (%v)", refuseWrite(path, path+side.name+" is not writable", side.fi), cause)
		}
	}
	return cause
}

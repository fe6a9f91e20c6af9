package ledger

import (
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Sentinel errors. Callers match them with errors.Is; the CLI maps each to
// an exit code.
var (
	// ErrInvalidInput matches every refusal of a key, payload or argument.
	ErrInvalidInput = errors.New("invalid input")
	// ErrNoLedger means a reading command found no ledger file to read.
	ErrNoLedger = errors.New("no ledger")
	// ErrNotFound means the key is not in the ledger.
	ErrNotFound = errors.New("no such action key")
	// ErrAppendOnly means a statement tried to change or remove evidence.
	ErrAppendOnly = errors.New("ledger evidence is append-only")
	// ErrBusy means the ledger stayed locked by other writers until the
	// caller's context ended.
	ErrBusy = errors.New("ledger busy")
	// ErrNewerSchema means the file was written by a newer tollgate.
	ErrNewerSchema = errors.New("ledger schema is newer than this tollgate")
	// ErrNotLedger means the file exists but is not an SQLite database.
	ErrNotLedger = errors.New("file is not a tollgate ledger")
	// ErrNeedsMigration means a read-only open found an older schema.
	ErrNeedsMigration = errors.New("ledger needs migrating, which needs write access")
	// ErrReadOnly means the ledger could not be written (file or disk
	// permissions, a read-only mount or a full disk).
	ErrReadOnly = errors.New("ledger cannot be written")
)

// ConflictError reports that a key already binds a different payload. It
// carries the stored hash and which fields differ, never a body.
type ConflictError struct {
	Key          string
	StoredSHA256 string
	AttemptSHA   string
	State        State
	// Differs lists the differing fields among kind, target and body; it is
	// nil when the stored intent came from outside tollgate and its fields
	// cannot be compared.
	Differs    []string
	ConflictID int64
}

// Error implements error.
func (e *ConflictError) Error() string {
	d := "unknown fields"
	if len(e.Differs) > 0 {
		d = strings.Join(e.Differs, ", ")
	}
	return fmt.Sprintf("conflict: key %s already binds payload sha256 %s; this call differs in %s (logged as conflict %d)", e.Key, e.StoredSHA256, d, e.ConflictID)
}

// Answer is the conflict as an agent reads it (the CLI's --json answer,
// the MCP tools' result): the stored and attempted digests, the fields
// that differ, and that a new key is the way to a different payload.
func (e *ConflictError) Answer() map[string]any {
	differs := e.Differs
	if differs == nil {
		differs = []string{}
	}
	return map[string]any{"key": e.Key, "error": "conflict", "verdict": "conflict", "stored_sha256": e.StoredSHA256,
		"attempted_sha256": e.AttemptSHA, "state": e.State, "differs": differs, "differs_known": e.Differs != nil,
		"conflict_id": e.ConflictID, "replayed": false, "safe_new_key": true}
}

// mapDriverError turns SQLite result codes into the package's sentinels.
// It matches codes, never message text, so that it survives driver and
// SQLite upgrades.
func mapDriverError(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch code := se.Code(); {
	case code == sqlite3.SQLITE_CONSTRAINT_TRIGGER:
		return fmt.Errorf("%w: %v", ErrAppendOnly, err)
	case code&0xff == sqlite3.SQLITE_BUSY, code&0xff == sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("%w: %v", ErrBusy, err)
	case code&0xff == sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: %v", ErrNotLedger, err)
	case code&0xff == sqlite3.SQLITE_READONLY, code&0xff == sqlite3.SQLITE_FULL,
		code&0xff == sqlite3.SQLITE_CANTOPEN, code&0xff == sqlite3.SQLITE_PERM:
		return fmt.Errorf("%w: %v", ErrReadOnly, err)
	}
	return err
}

// isBusy reports whether err is a lock contention that a retry can clear.
func isBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return errors.Is(err, ErrBusy)
}

// isIOErr reports an SQLite I/O error (SQLITE_IOERR and its extended codes).
func isIOErr(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_IOERR
}

// isShortRead reports SQLITE_IOERR_SHORT_READ.
func isShortRead(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_IOERR_SHORT_READ
}

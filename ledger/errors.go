package ledger

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// Sentinel errors, the engines' own (package engine) under the names
// callers know. Callers match them with errors.Is; the CLI maps each to
// an exit code.
var (
	// ErrInvalidInput matches every refusal of a key, payload or argument.
	ErrInvalidInput = engine.ErrInvalidInput
	// ErrNoLedger means a reading command found no ledger to read.
	ErrNoLedger = engine.ErrNoLedger
	// ErrNotFound means the key is not in the ledger.
	ErrNotFound = errors.New("no such action key")
	// ErrAppendOnly means a statement tried to change or remove evidence.
	ErrAppendOnly = engine.ErrAppendOnly
	// ErrBusy means the ledger stayed locked by other writers until the
	// caller's context ended.
	ErrBusy = engine.ErrBusy
	// ErrNewerSchema means the ledger was written by a newer tollgate.
	ErrNewerSchema = engine.ErrNewerSchema
	// ErrNotLedger means what was named exists but is not a ledger.
	ErrNotLedger = engine.ErrNotLedger
	// ErrNeedsMigration means a read-only open found an older schema.
	ErrNeedsMigration = engine.ErrNeedsMigration
	// ErrDevelopmentSchema: see engine.ErrDevelopmentSchema.
	ErrDevelopmentSchema = engine.ErrDevelopmentSchema
	// ErrReadOnly means the ledger could not be written (file or disk
	// permissions, a read-only mount or a full disk).
	ErrReadOnly = engine.ErrReadOnly
	// ErrUnavailable: see engine.ErrUnavailable.
	ErrUnavailable = engine.ErrUnavailable
	// ErrCommitUnknown: see engine.ErrCommitUnknown.
	ErrCommitUnknown = engine.ErrCommitUnknown
	// ErrOthersKey: see engine.ErrOthersKey (an ErrNotPermitted).
	ErrOthersKey = engine.ErrOthersKey
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

package ledger

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A hash chain alone cannot reveal a cut tail or a chain recomputed from
// scratch: both look whole. A witness file outside the ledger keeps the
// heads that verify, backup and console sessions saw, one JSON object a
// line; verify then checks that each is still on the chain. Someone who
// can edit the ledger may not be able to edit the witness (keep it under
// another user, or copy it off the host), and must know of it to try.

// WitnessLine is one witnessed head with the time it was seen.
type WitnessLine struct {
	Head
	At time.Time `json:"at"`
	By string    `json:"by"`
}

// SystemWitnessPath is the shared witness guard consults: a file in a
// folder the operators' group owns, readable by agents and writable only
// by operators (README, "Trust model"). Like the anchor, it is fixed at
// build or install time (-ldflags "-X github.com/tollgate-dev/tollgate/ledger.SystemWitnessPath=...")
// and never taken from the environment: an agent that could point guard
// at another witness could hide a rollback from it.
var SystemWitnessPath = "/var/lib/tollgate/witness"

// DefaultWitnessPath is tollgate/witness under the XDG state directory.
func DefaultWitnessPath() (string, error) {
	base, err := xdgDir("XDG_STATE_HOME", ".local/state")
	if err != nil {
		return "", fmt.Errorf("no witness path: set --witness or XDG_STATE_HOME (%v)", err)
	}
	return filepath.Join(base, "tollgate", "witness"), nil
}

// ReadWitness returns the heads in a witness file. A missing file has
// none; a line that does not parse (a torn last line, an edit) is
// returned as a Problem so verify reports it rather than stopping. Lines
// are read whole, whatever their length: a reader with a line limit
// fails on a long line, and a witness nobody can read checks nothing.
func ReadWitness(path string) ([]Head, []Problem, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("witness %s: %w", path, err)
	}
	defer f.Close()
	var heads []Head
	var bad []Problem
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var w WitnessLine
			if err := json.Unmarshal(line, &w); err != nil || w.LedgerID == "" || len(w.Hash) != 64 || w.Seq < 0 {
				bad = append(bad, Problem{Table: "witness", Row: fmt.Sprintf("line=%d", n), Rule: "the witness line does not parse as a head"})
			} else {
				heads = append(heads, w.Head)
			}
		}
		if errors.Is(err, io.EOF) {
			return heads, bad, nil
		}
		if err != nil {
			return heads, bad, fmt.Errorf("witness %s: %w", path, err)
		}
	}
}

// AppendWitness appends a head to the witness file (0600, in a 0700
// folder), synced before it returns.
func AppendWitness(path string, h Head, by string, at time.Time) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	return writeWitnessLine(f, h, by, at)
}

// writeWitnessLine writes one line, synced, and closes f.
func writeWitnessLine(f *os.File, h Head, by string, at time.Time) error {
	b, _ := json.Marshal(WitnessLine{Head: h, At: at.UTC(), By: by})
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("witness: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("witness: %w", err)
	}
	return f.Close()
}

// swapped is the finding for a witnessed head of another ledger at this
// ledger's path.
func swapped(h Head, id string) string {
	return fmt.Sprintf("the witness saw ledger %s at this path (event %d), and the ledger here is %s: the file was replaced by another ledger (a swap); if it was replaced on purpose, an operator moves the old witness aside", h.LedgerID, h.Seq, id)
}

// witnessName is the ledger's location as a witness names it: an absolute
// path for a file, the location as given for PostgreSQL.
func (s *Store) witnessName() string {
	loc := s.eng.Location()
	if strings.Contains(loc, "://") || strings.Contains(loc, "=") {
		return loc
	}
	if abs, err := filepath.Abs(loc); err == nil {
		return abs
	}
	return loc
}

// checkWitness is the rule for a grant when a witness can be read: the
// newest head it saw of this ledger must still be on the chain (else the
// ledger was rolled back, or restored from an older copy), and no head of
// another ledger may name this ledger's path (else it was swapped). A
// witness that does not exist or cannot be read checks nothing: that
// deployment's limit is in the README's trust model, and doctor says so.
func checkWitness(ctx context.Context, tx *Tx, heads []Head, id, path string) error {
	var newest *Head
	for i, h := range heads {
		switch {
		case h.LedgerID != id:
			if h.Path != "" && h.Path == path {
				return integrityError("%s", swapped(h, id))
			}
		case newest == nil || h.Seq > newest.Seq:
			newest = &heads[i]
		}
	}
	if newest == nil || newest.Seq == 0 {
		return nil
	}
	hash, err := witnessedHash(ctx, tx, *newest)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return integrityError("the witness saw event %d of this ledger, which it no longer contains: it was rolled back or restored from an older copy", newest.Seq)
	case errors.Is(err, errUncommittedRun):
		return integrityError("the witness saw event %d of this ledger, and %v: it was rolled back or restored from an older copy", newest.Seq, err)
	case err != nil:
		return err
	case hash != newest.Hash:
		return integrityError("the witness saw event %d with hash %s, and the ledger now has %s there: the chain was rewritten", newest.Seq, newest.Hash, hash)
	}
	return nil
}

// sharedWitness caches the heads of the witness guard consults, reread
// only when the file changes (a long-lived store grants many times).
type sharedWitness struct {
	path string
	mu   sync.Mutex
	key  [2]int64 // size and modification time of the file last read
	read []Head
}

// heads returns the witness's heads; a missing file has none (see
// checkWitness). A witness that exists and cannot be read is an error:
// guard then fails closed, since a witness an agent could make unreadable
// would otherwise hide every rollback from it.
func (w *sharedWitness) heads() ([]Head, error) {
	if w == nil || w.path == "" {
		return nil, nil
	}
	fi, err := os.Stat(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", w.path, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key := [2]int64{fi.Size(), fi.ModTime().UnixNano()}
	if key == w.key {
		return w.read, nil
	}
	heads, _, err := ReadWitness(w.path)
	if err != nil {
		return nil, err
	}
	w.key, w.read = key, heads
	return heads, nil
}

// ShareWitness appends a head to the shared witness (SystemWitnessPath)
// when its folder exists and this user may write there: operators' verify,
// backup and console sessions feed the witness every guard consults. It
// never creates the folder (that is the installer's step, with the
// operators' group as owner) and reports whether it wrote.
func ShareWitness(h Head, by string, at time.Time) (bool, error) {
	return shareWitnessAt(SystemWitnessPath, h, by, at)
}

// shareWitnessAt is ShareWitness for the witness at path. A head of a
// copy (a ledger file at another path than the one the witness follows
// for its id) is not added: it would say the real ledger was rolled back
// and take it out of service for every agent (issue 42). Guard still
// judges any file of that id by the newest head of the real one, so an
// old copy restored elsewhere gets nothing.
func shareWitnessAt(path string, h Head, by string, at time.Time) (bool, error) {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return false, nil
	}
	if heads, _, err := ReadWitness(path); err == nil {
		if followed := followedPath(heads, h.LedgerID); isFilePath(h.Path) && followed != "" && followed != h.Path {
			return false, &CopyError{LedgerID: h.LedgerID, Path: h.Path, Followed: followed}
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o664)
	if errors.Is(err, fs.ErrPermission) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("shared witness: %w", err)
	}
	// Every operator appends to it: the group (the folder's, by its
	// setgid bit) may write, whatever this user's umask; only the file's
	// owner can change its mode, so a failure here is not one.
	_ = f.Chmod(0o664)
	return true, writeWitnessLine(f, h, by, at)
}

// CopyError is a head the shared witness did not take because its ledger
// file is a copy: the witness follows the ledger of that id at another
// path.
type CopyError struct {
	LedgerID, Path, Followed string
}

// Error implements error.
func (e *CopyError) Error() string {
	return fmt.Sprintf("ledger %s at %s is a copy: the shared witness follows this ledger at %s, so nothing was written to it (the ledger there stays in service)",
		e.LedgerID, e.Path, e.Followed)
}

// followedPath is the path the shared witness follows for ledger id: the
// file path of the first of its heads that names one, "" when none does.
// Moving a ledger on purpose is an operator's step, as a swap is: the old
// witness is moved aside.
func followedPath(heads []Head, id string) string {
	for _, h := range heads {
		if h.LedgerID == id && isFilePath(h.Path) {
			return h.Path
		}
	}
	return ""
}

// isFilePath reports whether a witness location is a file's path, not a
// PostgreSQL location (which each operator's URL spells differently).
func isFilePath(loc string) bool {
	return loc != "" && !strings.Contains(loc, "://") && !strings.Contains(loc, "=")
}

// witnessAct appends the head after an operator's act (a rule, an epoch,
// a vote, a reconciliation, a review, an operator added or removed) to
// the witness this store consults, where its folder exists and this user
// may write it (the operators' group: an agent never gets here, having no
// operator key). The act is stored whatever happens here; a witness that
// cannot be written is what verify, backup and console write again.
func (s *Store) witnessAct(ctx context.Context) {
	if s.witness == nil || s.witness.path == "" {
		return
	}
	if h, err := s.Head(ctx); err == nil {
		_, _ = shareWitnessAt(s.witness.path, h, "operator act", time.Now())
	}
}

// Head returns the chain's current head.
func (s *Store) Head(ctx context.Context) (Head, error) {
	var h Head
	h.Path = s.witnessName()
	err := s.read(ctx, func(tx *Tx) error {
		var err error
		if h.LedgerID, err = ledgerID(ctx, tx); err != nil {
			return err
		}
		h.Hash = zeroHash
		err = tx.QueryRowContext(ctx, "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").Scan(&h.Seq, &h.Hash)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return h, err
}

// witnessedHash is the hash the chain holds at a witnessed head's seq:
// the event's, or for an archived event the hash its run of pruned events
// ends with. Inside a run only its ends are kept here, so a head witnessed
// there is taken as witnessed, but only when a checkpoint event commits
// the run (runCommitted): pruned_events accepts an INSERT, and a run no
// checkpoint names would otherwise hide any head a rollback lost. No event
// and no run: sql.ErrNoRows; a run no checkpoint commits: errUncommittedRun.
func witnessedHash(ctx context.Context, tx *Tx, h Head) (string, error) {
	var hash string
	err := tx.QueryRowContext(ctx, "SELECT hash FROM events WHERE seq = ?", h.Seq).Scan(&hash)
	if !errors.Is(err, sql.ErrNoRows) {
		return hash, err
	}
	var sp span
	if err := tx.QueryRowContext(ctx, "SELECT first_seq, last_seq, first_prev, last_hash, archive_id FROM pruned_events WHERE first_seq <= ? AND last_seq >= ? ORDER BY first_seq DESC LIMIT 1",
		h.Seq, h.Seq).Scan(&sp.first, &sp.last, &sp.prev, &sp.hash, &sp.archive); err != nil {
		return "", err
	}
	if err := runCommitted(ctx, tx, sp); err != nil {
		return "", err
	}
	if sp.last != h.Seq {
		return h.Hash, nil
	}
	return sp.hash, nil
}

// errUncommittedRun: a run of archived events that no checkpoint commits.
var errUncommittedRun = errors.New("no archive checkpoint commits the run of archived events that holds it")

// runCommitted proves that a run of pruned events is one an archive left:
// its archives row is committed by a checkpoint event after the run, as
// that event's hash says, the checkpoint's copied chain reaches past the
// run, and the digest of the archive's runs the row carries is that of the
// runs the ledger holds, this one among them.
func runCommitted(ctx context.Context, tx *Tx, sp span) error {
	t := factTableNamed("archives")
	var seq int64
	var sha string
	err := tx.QueryRowContext(ctx, "SELECT seq, fact_sha256 FROM events WHERE fact_table = 'archives' AND fact_row = ? AND type = ?",
		strconv.FormatInt(sp.archive, 10), evCheckpoint).Scan(&seq, &sha)
	if errors.Is(err, sql.ErrNoRows) {
		return errUncommittedRun
	}
	if err != nil {
		return err
	}
	vals, err := scanFact(tx.QueryRowContext(ctx, "SELECT "+t.cols+" FROM archives WHERE id = ?", sp.archive), t.ncols())
	if errors.Is(err, sql.ErrNoRows) {
		return errUncommittedRun
	}
	if err != nil {
		return err
	}
	through, err := strconv.ParseInt(t.value(vals, "through_seq"), 10, 64)
	if err != nil || t.ref(vals).SHA256 != sha || seq <= sp.last || sp.last > through {
		return errUncommittedRun
	}
	sd, err := spansDigest(ctx, tx, sp.archive)
	if err != nil {
		return err
	}
	if sd != t.value(vals, "spans_sha256") {
		return errUncommittedRun
	}
	return nil
}

package ledger

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
// returned as a Problem so verify reports it rather than stopping.
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
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var w WitnessLine
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil || w.LedgerID == "" || len(w.Hash) != 64 || w.Seq < 0 {
			bad = append(bad, Problem{Table: "witness", Row: fmt.Sprintf("line=%d", n), Rule: "the witness line does not parse as a head"})
			continue
		}
		heads = append(heads, w.Head)
	}
	return heads, bad, sc.Err()
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

// Head returns the chain's current head.
func (s *Store) Head(ctx context.Context) (Head, error) {
	var h Head
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

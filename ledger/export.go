package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Evidence is one action's exported record: what was decided, what the
// worker reported, the safe references, and whether the proof holds.
type Evidence struct {
	Detail
	Redaction string `json:"redaction"` // retained, redacted or external
	// ChainVerified is the result of Verify over the whole ledger at export time.
	ChainVerified bool   `json:"chain_verified"`
	Events        int    `json:"events"`
	LastEventHash string `json:"last_event_hash,omitempty"`
	LatencyMS     *int64 `json:"latency_ms,omitempty"`
}

// Export writes one JSON line of evidence per action, oldest first, paging
// through the index so memory stays flat on a large ledger.
func (s *Store) Export(ctx context.Context, w io.Writer) (int, error) {
	rep, err := s.Verify(ctx)
	if err != nil {
		return 0, err
	}
	enc := json.NewEncoder(w)
	n := 0
	var after int64
	for {
		var keys []string
		err := s.read(ctx, func(tx *Tx) error {
			keys = keys[:0]
			rows, err := tx.QueryContext(ctx, "SELECT id, action_key FROM action_index WHERE id > ? ORDER BY id LIMIT 500", after)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var k string
				if err := rows.Scan(&after, &k); err != nil {
					return err
				}
				keys = append(keys, k)
			}
			return rows.Err()
		})
		if err != nil || len(keys) == 0 {
			return n, err
		}
		for _, k := range keys {
			d, err := s.Status(ctx, k)
			if err != nil {
				return n, err
			}
			e := Evidence{Detail: d, ChainVerified: rep.OK(), Events: len(d.Events), Redaction: "retained"}
			switch {
			case !d.Retained:
				e.Redaction = "external"
			case d.Redacted:
				e.Redaction = "redacted"
			}
			if len(d.Events) > 0 {
				e.LastEventHash = d.Events[len(d.Events)-1].Hash
			}
			for _, r := range d.Reports {
				if r.Kind == "accepted" {
					l := r.Latency
					e.LatencyMS = &l
				}
			}
			if err := enc.Encode(e); err != nil {
				return n, err
			}
			n++
		}
	}
}

// Backup writes a consistent copy of the live ledger to dest with VACUUM
// INTO, which reads one snapshot while other processes keep writing. dest
// must not exist (or be empty); it is created with mode 0600.
func (s *Store) Backup(ctx context.Context, dest string) error {
	if s.w == nil {
		return fmt.Errorf("%w: backup needs a writable ledger connection", ErrReadOnly)
	}
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		if fi, e := os.Stat(dest); e != nil || fi.Size() > 0 {
			return fmt.Errorf("%w: backup target %s already exists and is not empty", ErrInvalidInput, dest)
		}
	} else if err != nil {
		return fmt.Errorf("backup: %w", err)
	} else {
		f.Close()
	}
	return retryBusy(ctx, func() error {
		_, err := s.w.ExecContext(ctx, "VACUUM INTO ?", dest)
		return err
	})
}

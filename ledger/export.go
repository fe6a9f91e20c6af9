package ledger

import (
	"context"
	"encoding/json"
	"io"
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

// Backup writes a consistent copy of the live ledger to dest, while
// other processes keep writing, and returns the head the copy holds. How
// the copy is made is the engine's (SQLite: VACUUM INTO a temporary file,
// synced and linked into place, so a backup killed midway leaves nothing
// at dest); an existing dest is never replaced.
func (s *Store) Backup(ctx context.Context, dest string) (Head, error) {
	// The head is read before the copy: the copy's snapshot is the same
	// or later, so the head is on its chain.
	h, err := s.Head(ctx)
	if err != nil {
		return Head{}, err
	}
	if err := s.eng.Backup(ctx, dest); err != nil {
		return Head{}, err
	}
	return h, nil
}

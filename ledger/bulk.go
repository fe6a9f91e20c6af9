package ledger

import (
	"context"
	"fmt"
)

// BulkItem is one action for BulkGuard.
type BulkItem struct {
	Key     string
	Payload Payload
	Agent   string
	// RecordOnly stores the intent without evaluating policy.
	RecordOnly bool
}

// BulkGuard runs Record or Guard for many keys in one transaction: the same
// rows, events and checks as one call per key, with one commit. It is for
// imports and for building large ledgers in benchmarks. Conflicts and
// fences are logged as usual and counted, not returned.
func (s *Store) BulkGuard(ctx context.Context, items []BulkItem) (conflicts int, err error) {
	keys := make([]Key, len(items))
	for i, it := range items {
		if keys[i], err = ParseKey(it.Key); err != nil {
			return 0, err
		}
		if err := it.Payload.Validate(); err != nil {
			return 0, fmt.Errorf("key %s: %w", it.Key, err)
		}
	}
	g := s.grantInputs()
	return write(ctx, s, func(tx *Tx) (int, error) {
		conflicts, now := 0, tx.now
		for i, it := range items {
			in, ce, fe, err := recordTx(ctx, tx, keys[i], it.Payload, it.Payload.Digest(), RecordOptions{Agent: s.agentOr(it.Agent)}, now)
			if err != nil {
				return 0, err
			}
			if ce != nil || fe != nil {
				conflicts++
				continue
			}
			if it.RecordOnly {
				continue
			}
			if _, _, err := guardTx(ctx, tx, keys[i], in, GuardOptions{Agent: it.Agent, Lease: DefaultLease}, g, now); err != nil {
				return 0, err
			}
		}
		return conflicts, nil
	})
}

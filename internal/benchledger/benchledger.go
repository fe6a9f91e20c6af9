// Package benchledger builds large ledgers for benchmarks. It is its own
// package because the CLI and console benchmarks need the same fixture,
// and building a million-action ledger is slow enough to cache on disk.
package benchledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// Path returns a cached ledger with total actions, of which pending wait
// for approval and the rest are recorded intents. It is built on first use
// in the system temporary folder and reused afterwards; callers that
// write to it should copy it first.
func Path(total, pending int) (string, error) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("tollgate-bench-%d-%d.db", total, pending))
	if _, err := os.Stat(path + ".done"); err == nil {
		// A ledger cached by an older build is migrated in place.
		s, err := ledger.Open(context.Background(), path, ledger.Options{})
		if err != nil {
			return "", err
		}
		return path, s.Close()
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	ctx := context.Background()
	s, err := ledger.Open(ctx, path, ledger.Options{})
	if err != nil {
		return "", err
	}
	defer s.Close()
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Approval, TTL: 365 * 24 * time.Hour}, "bench"); err != nil {
		return "", err
	}
	const batch = 5000
	items := make([]ledger.BulkItem, 0, batch)
	for i := 0; i < total; i++ {
		it := ledger.BulkItem{
			Key:        fmt.Sprintf("bulk:action-%07d", i),
			Payload:    ledger.Payload{Kind: "note", Target: fmt.Sprintf("target-%d", i%977), Body: fmt.Sprintf("body of action %d", i)},
			Agent:      fmt.Sprintf("agent-%d", i%13),
			RecordOnly: true,
		}
		if i%(total/max(pending, 1)) == 0 && i/(total/max(pending, 1)) < pending {
			it.Payload.Kind, it.RecordOnly = "refund", false
		}
		items = append(items, it)
		if len(items) == batch || i == total-1 {
			if _, err := s.BulkGuard(ctx, items); err != nil {
				return "", err
			}
			items = items[:0]
		}
	}
	if err := os.WriteFile(path+".done", nil, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// Copy copies a built ledger to dst (a checkpointed file has no WAL).
func Copy(src, dst string) error {
	ctx := context.Background()
	s, err := ledger.Open(ctx, src, ledger.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Backup(ctx, dst)
	return err
}

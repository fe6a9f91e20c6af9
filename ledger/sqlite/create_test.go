package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCreateWaitsForInPlaceCreator: a process that loses the race to
// create the ledger to one that creates it in place (the file exists,
// still empty, when the link fails) waits for the header and then opens
// the winner's file, instead of refusing it as an empty file.
func TestCreateWaitsForInPlaceCreator(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// The winner's bytes: a ledger made elsewhere.
	ready := filepath.Join(dir, "ready.db")
	if err := createLedger(ctx, ready, Options{BusyTimeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(ready)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ledger.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		os.WriteFile(path, full, 0o600)
	}()
	if err := createLedger(ctx, path, Options{BusyTimeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, exists, err := checkPath(path); err != nil || !exists {
		t.Fatalf("after losing the race: exists %v, %v", exists, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".tollgate-new-*"))
	if len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestCopyNeverTakesTheOriginalOutOfService (issue 42): an operator who
// experiments on a copy of the ledger at another path (operator acts,
// verify's and backup's heads) adds nothing to the shared witness, which
// follows the ledger at its own path; the real ledger's agents keep
// getting permits. An old copy restored at a new path still gets nothing.
func TestCopyNeverTakesTheOriginalOutOfService(t *testing.T) {
	sqliteOnly(t)
	shared := SystemWitnessPath // this run's stand-in (TestMain)
	if err := os.MkdirAll(filepath.Dir(shared), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(shared)) })
	clk := newClock()
	open := func(path string) *Store {
		s, err := Open(ctx, path, Options{Now: clk.Now, Witness: shared})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	real := open(filepath.Join(t.TempDir(), "ledger.db"))
	if _, err := real.SetPolicy(ctx, approvals.Rule{Pattern: "auto.*", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	h, err := real.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := ShareWitness(h, "verify", time.Now()); !ok || err != nil {
		t.Fatalf("the real ledger's head: %v %v", ok, err)
	}
	old := filepath.Join(t.TempDir(), "old.db")
	if _, err := real.Backup(ctx, old); err != nil {
		t.Fatal(err)
	}
	// The experiment: a copy, changed by an operator, verified, backed up.
	cp := filepath.Join(t.TempDir(), "experiment.db")
	if _, err := real.Backup(ctx, cp); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(shared)
	exp := open(cp)
	if _, err := exp.SetPolicy(ctx, approvals.Rule{Pattern: "scratch", Mode: approvals.Deny}, "alice"); err != nil {
		t.Fatal(err)
	}
	eh, err := exp.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var copyErr *CopyError
	if ok, err := ShareWitness(eh, "verify", time.Now()); ok || !errors.As(err, &copyErr) || copyErr.Followed != h.Path {
		t.Fatalf("the copy's head: wrote %v, %v; want a CopyError naming %s", ok, err, h.Path)
	}
	if after, _ := os.ReadFile(shared); string(after) != string(before) {
		t.Fatalf("the copy changed the shared witness:\n%s", after)
	}
	// The real ledger's agents still work, and it moves on, witnessed.
	if a, err := real.Guard(ctx, "k:1", Payload{"auto.job", "t", "b"}, GuardOptions{Agent: "bot"}); err != nil || a.Verdict != Permitted {
		t.Fatalf("the real ledger after an experiment on a copy: %+v %v", a, err)
	}
	if h, err = real.Head(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := ShareWitness(h, "backup", time.Now()); !ok || err != nil {
		t.Fatalf("the real ledger's next head: %v %v", ok, err)
	}
	// An old copy restored at a new path: guard grants nothing there.
	restored := open(old)
	if a, err := restored.Guard(ctx, "k:2", Payload{"auto.job", "t", "b"}, GuardOptions{Agent: "bot"}); !errors.Is(err, ErrIntegrity) || a.Verdict == Permitted {
		t.Fatalf("an old copy at a new path: %+v %v, want an integrity refusal", a, err)
	}
}

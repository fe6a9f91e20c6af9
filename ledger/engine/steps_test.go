package engine

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tollgate-dev/tollgate/internal/hostguard"
)

// TestMain guards the host's shared places, as every test binary does.
func TestMain(m *testing.M) { os.Exit(hostguard.Main(func(hostguard.Places) {}, m.Run)) }

// TestStepsAboveTheBaseline: migrations are read in version order, a
// README beside them is not one, none at all is a schema at its
// baseline, and a file numbered at or below the baseline (a development
// migration merged after the fold) is refused by name instead of being
// skipped by every ledger.
func TestStepsAboveTheBaseline(t *testing.T) {
	fsys := fstest.MapFS{
		"m/README.md":     {Data: []byte("how")},
		"m/0102_b.sql":    {Data: []byte("SELECT 2")},
		"m/0101_a.sql":    {Data: []byte("SELECT 1")},
		"empty/README.md": {Data: []byte("how")},
	}
	steps, err := Steps(fsys, "m")
	if err != nil || len(steps) != 2 || steps[0].Name != "0101_a.sql" || steps[1].Version != 102 || Current(steps) != 102 {
		t.Fatalf("steps %+v, %v", steps, err)
	}
	if steps, err := Steps(fsys, "empty"); err != nil || len(steps) != 0 || Current(steps) != Baseline {
		t.Fatalf("no migration: %+v, %v", steps, err)
	}
	fsys["m/0042_late.sql"] = &fstest.MapFile{Data: []byte("SELECT 3")}
	if _, err := Steps(fsys, "m"); err == nil || !strings.Contains(err.Error(), "0042_late.sql") {
		t.Fatalf("a migration below the baseline: %v", err)
	}
}

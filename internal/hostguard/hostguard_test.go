package hostguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMainFailsARunThatTouchesTheHost: a run that writes under a
// guarded place fails, whatever its own result; one that does not keeps
// its code. The guarded places are stand-ins in a temporary folder.
func TestMainFailsARunThatTouchesTheHost(t *testing.T) {
	old := HostPaths
	defer func() { HostPaths = old }()
	root := t.TempDir()
	HostPaths = []string{filepath.Join(root, "var-lib"), filepath.Join(root, "etc")}
	os.Mkdir(HostPaths[1], 0o755)
	var got Places
	if code := Main(func(p Places) { got = p }, func() int { return 3 }); code != 3 {
		t.Fatalf("a clean run exits %d, want its own 3", code)
	}
	if !strings.HasPrefix(got.Witness, got.Dir) || !strings.HasPrefix(got.Anchor, got.Dir) || !strings.Contains(got.LDFlags(), "ledger.SystemWitnessPath="+got.Witness) {
		t.Fatalf("places %+v, flags %q", got, got.LDFlags())
	}
	for name, touch := range map[string]func() error{
		"creates the witness folder": func() error { return os.Mkdir(HostPaths[0], 0o755) },
		"writes the anchor":          func() error { return os.WriteFile(filepath.Join(HostPaths[1], "operators"), []byte("x"), 0o644) },
	} {
		if code := Main(func(Places) {}, func() int {
			if err := touch(); err != nil {
				t.Fatal(err)
			}
			return 0
		}); code != 1 {
			t.Errorf("a run that %s exits %d, want 1", name, code)
		}
	}
}

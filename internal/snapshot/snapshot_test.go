package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/hostguard"
)

// TestMain guards the host's shared places, as every test binary does.
func TestMain(m *testing.M) { os.Exit(hostguard.Main(func(hostguard.Places) {}, m.Run)) }

// TestWriteReadsBackAndIsStable: what Write stores, Read gives back, and
// the same text stores the same bytes (a regenerated snapshot that did
// not change shows no change).
func TestWriteReadsBackAndIsStable(t *testing.T) {
	dir := t.TempDir()
	text := "CREATE TABLE t (a TEXT);\n-- é\n"
	var files [2][]byte
	for i := range files {
		p := filepath.Join(dir, "s.gz")
		if err := Write(p, text); err != nil {
			t.Fatal(err)
		}
		got, err := Read(p)
		if err != nil || got != text {
			t.Fatalf("read back %q, %v", got, err)
		}
		files[i], _ = os.ReadFile(p)
	}
	if string(files[0]) != string(files[1]) {
		t.Fatal("the same text stored different bytes")
	}
	if _, err := Read(filepath.Join(dir, "none.gz")); err == nil {
		t.Fatal("a missing snapshot read")
	}
}

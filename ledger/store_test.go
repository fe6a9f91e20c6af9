package ledger

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The last process to close a ledger leaves no WAL behind, so the next
// one does not read it all back before its first query.
func TestCloseLeavesNoWAL(t *testing.T) {
	for _, oneShot := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "l.db")
		s, err := Open(ctx, path, Options{OneShot: oneShot})
		if err != nil {
			t.Fatal(err)
		}
		p := Payload{"k", "t", "b"}
		for _, key := range []string{"a", "b", "a"} {
			if _, err := s.Guard(ctx, key, p, GuardOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.List(ctx, Filter{}); err != nil { // a reader connection, too
			t.Fatal(err)
		}
		if _, err := os.Stat(path + "-wal"); err != nil {
			t.Fatalf("one-shot %v: no WAL while open: %v", oneShot, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("one-shot %v: the WAL is still there after the last close (%v)", oneShot, err)
		}
	}
}

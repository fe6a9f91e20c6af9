package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestNotALedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	content := bytes.Repeat([]byte("these are my notes, not a database\n"), 200)
	os.WriteFile(path, content, 0o600)
	_, err := Open(ctx, path, Options{})
	if !errors.Is(err, ErrNotLedger) {
		t.Fatalf("err = %v, want ErrNotLedger", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
		t.Fatal("the file was changed")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	sqliteOnly(t)
	s, _ := openTest(t)
	s.Record(ctx, "k", Payload{"a", "b", "c"}, RecordOptions{})
	path := s.Path()
	s.Close()
	db := rawDB(t, path)
	newer := SchemaVersion() + 1
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", newer)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, ro := range []bool{false, true} {
		if _, err := Open(ctx, path, Options{ReadOnly: ro}); !errors.Is(err, ErrNewerSchema) {
			t.Fatalf("read-only=%v: err = %v, want ErrNewerSchema", ro, err)
		}
	}
	var v, n int
	db = rawDB(t, path)
	db.QueryRow("PRAGMA user_version").Scan(&v)
	db.QueryRow("SELECT count(*) FROM intents").Scan(&n)
	if v != newer || n != 1 {
		t.Fatalf("after refusal: user_version %d, %d intents", v, n)
	}
}

func TestMissingLedgerForReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "ledger.db")
	if _, err := Open(ctx, path, Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only open of a missing ledger succeeded")
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatal("a read-only open created the folder")
	}
}

// TestReadOnlyFile opens a ledger through a read-only bind mount (root
// ignores file modes), or with modes 0400/0500 when not root.
func TestReadOnlyFile(t *testing.T) {
	s, _ := openTest(t)
	s.Record(ctx, "k", Payload{"a", "b", "c"}, RecordOptions{})
	src := filepath.Dir(s.Path())
	s.Close()
	dir := src
	if os.Geteuid() == 0 {
		dir = t.TempDir()
		if out, err := exec.Command("mount", "--bind", "-o", "ro", src, dir).CombinedOutput(); err != nil {
			t.Skipf("running as root and cannot make a read-only bind mount (%v: %s)", err, bytes.TrimSpace(out))
		}
		defer exec.Command("umount", dir).Run()
		exec.Command("mount", "-o", "remount,ro,bind", dir).Run()
	} else {
		os.Chmod(filepath.Join(dir, "ledger.db"), 0o400)
		os.Chmod(dir, 0o500)
		defer os.Chmod(dir, 0o700)
	}
	path := filepath.Join(dir, "ledger.db")
	r, err := Open(ctx, path, Options{})
	if err == nil {
		defer r.Close()
		_, err = r.Record(ctx, "k2", Payload{"a", "b", "c"}, RecordOptions{})
	}
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("write to a read-only ledger: %v, want ErrReadOnly", err)
	}
	// Reading still works, and the stored intent is intact.
	ro, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	defer ro.Close()
	if d, err := ro.Status(ctx, "k"); err != nil || d.SHA256 != (Payload{"a", "b", "c"}).Digest() {
		t.Fatalf("status through the read-only file: %+v %v", d, err)
	}
}

// TestDiskFull fills a tiny tmpfs: the write that does not fit fails with
// ErrReadOnly, and every earlier acknowledged write is intact.
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s); disk-full is not simulated", err, bytes.TrimSpace(out))
	}
	defer exec.Command("umount", dir).Run()
	path := filepath.Join(dir, "ledger.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Skipf("the tmpfs is too small for an empty ledger: %v", err)
	}
	var acked []string
	body := string(bytes.Repeat([]byte("x"), 3000))
	for i := 0; i < 10000; i++ {
		key := fmt.Sprintf("full:%d", i)
		if _, err = s.Record(ctx, key, Payload{"a", "b", body}, RecordOptions{}); err != nil {
			break
		}
		acked = append(acked, key)
	}
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("after %d writes: %v, want ErrReadOnly (disk full)", len(acked), err)
	}
	s.Close()
	s, err = Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range acked {
		if _, err := s.Status(ctx, k); err != nil {
			t.Fatalf("acknowledged %s lost: %v", k, err)
		}
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestRemovedWALIsNamed: deleting the -wal of a live ledger (as a
// clean-up script might) while a console holds it open makes the next
// writer fail with an error that names the file and what to do, not a
// bare I/O code.
func TestRemovedWALIsNamed(t *testing.T) {
	sqliteOnly(t)
	s, _ := openTest(t)
	if _, err := s.Record(ctx, "k:1", Payload{"a", "b", "c"}, RecordOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.Path() + "-wal"); err != nil {
		t.Fatal(err)
	}
	// The first store still holds the shared-memory index (as an open
	// console does); the next process to write finds the WAL gone.
	var err error
	for i := 2; i < 20 && err == nil; i++ {
		var w *Store
		if w, err = Open(ctx, testPath(s), Options{OneShot: true}); err == nil {
			_, err = w.Record(ctx, fmt.Sprintf("k:%d", i), Payload{"a", "b", "c"}, RecordOptions{})
			w.Close()
		}
	}
	if err == nil || !strings.Contains(err.Error(), s.Path()+"-wal was removed or cut") {
		t.Fatalf("write after the WAL was removed: %v", err)
	}
}

// TestReadOnlyMediaWithWAL: a ledger whose folder is read-only and whose
// -wal holds committed rows is refused with an error naming the WAL,
// never read from the main file alone (which would miss those rows).
func TestReadOnlyMediaWithWAL(t *testing.T) {
	sqliteOnly(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root for a read-only bind mount")
	}
	s, _ := openTest(t)
	for i := 0; i < 3; i++ {
		if _, err := s.Record(ctx, fmt.Sprintf("k:%d", i), Payload{"a", "b", "c"}, RecordOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Dir(s.Path())
	// Copy while the writer is open: the copy's WAL holds the rows.
	cp := t.TempDir()
	copyFile(t, s.Path(), filepath.Join(cp, "ledger.db"))
	if fi, err := os.Stat(filepath.Join(cp, "ledger.db-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("no WAL to test with (%v); src %s", err, src)
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "--bind", "-o", "ro", cp, dir).CombinedOutput(); err != nil {
		t.Skipf("cannot make a read-only bind mount (%v: %s)", err, bytes.TrimSpace(out))
	}
	defer exec.Command("umount", dir).Run()
	exec.Command("mount", "-o", "remount,ro,bind", dir).Run()
	r, err := Open(ctx, filepath.Join(dir, "ledger.db"), Options{ReadOnly: true})
	if err == nil {
		defer r.Close()
		for i := 0; i < 3; i++ {
			if _, err := r.Status(ctx, fmt.Sprintf("k:%d", i)); err != nil {
				t.Fatalf("read-only open answered without the WAL's rows: %v", err)
			}
		}
		return
	}
	if !strings.Contains(err.Error(), "-wal") {
		t.Fatalf("refusal does not name the WAL: %v", err)
	}
}

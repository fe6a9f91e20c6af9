package ledger

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// readOnlyEnv, when set, makes this test binary a process of
// TestReadOnlyLayouts run as another user: "read" reads the ledger at
// TOLLGATE_CHILD_DB as the reading commands do, "write" records into it.
const readOnlyEnv = "TOLLGATE_READ_ONLY_CHILD"

// nobody is the unprivileged user the layouts are owned by and read as,
// so that the permission bits bind (root passes them).
const nobody = 65534

// roResult is what one reader or writer saw.
type roResult struct {
	Keys     []string `json:"keys"`
	Listed   int      `json:"listed"`
	Verified int64    `json:"verified"`
	LedgerID string   `json:"ledger_id"`
	Err      string   `json:"err,omitempty"`
	ReadOnly bool     `json:"read_only,omitempty"` // the error is ErrReadOnly
}

// readAll reads the ledger at path as status, list, verify and export do,
// through a read-only store.
func readAll(path string, keys int) (r roResult) {
	s, err := Open(ctx, path, Options{ReadOnly: true})
	if err == nil {
		defer s.Close()
		err = func() error {
			for i := 0; i < keys; i++ {
				d, err := s.Status(ctx, fmt.Sprintf("k:%d", i))
				if err != nil {
					return err
				}
				r.Keys = append(r.Keys, d.Key)
			}
			rows, err := s.List(ctx, Filter{})
			if err != nil {
				return err
			}
			r.Listed = len(rows)
			rep, err := s.Verify(ctx)
			if err != nil {
				return err
			}
			if !rep.OK() {
				return fmt.Errorf("verify failed: %+v", rep)
			}
			r.Verified, r.LedgerID = rep.Intents, rep.LedgerID
			_, err = s.Export(ctx, io.Discard)
			return err
		}()
	}
	if err != nil {
		r.Err, r.ReadOnly = err.Error(), errors.Is(err, ErrReadOnly)
	}
	return r
}

// writeOne records one more key into the ledger at path.
func writeOne(path string) (r roResult) {
	s, err := Open(ctx, path, Options{OneShot: true})
	if err == nil {
		_, err = s.Record(ctx, "k:new", Payload{"a", "b", "c"}, RecordOptions{})
		s.Close()
	}
	if err != nil {
		r.Err, r.ReadOnly = err.Error(), errors.Is(err, ErrReadOnly)
	}
	return r
}

// TestReadOnlyChild is the other-user process of TestReadOnlyLayouts.
func TestReadOnlyChild(t *testing.T) {
	mode := os.Getenv(readOnlyEnv)
	if mode == "" {
		t.Skip("a child process of TestReadOnlyLayouts")
	}
	path := os.Getenv("TOLLGATE_CHILD_DB")
	var r roResult
	if mode == "write" {
		r = writeOne(path)
	} else {
		var keys int
		fmt.Sscan(os.Getenv("TOLLGATE_CHILD_KEYS"), &keys)
		r = readAll(path, keys)
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

// asNobody runs this test binary (copied where nobody can run it) as
// nobody in mode on path.
func asNobody(t *testing.T, bin, mode, path string, keys int) roResult {
	t.Helper()
	return asUser(t, nobody, bin, mode, path, keys)
}

// otherUser is a user who neither owns the layouts nor is root.
const otherUser = 54321

// asUser runs this test binary as uid in mode on path.
func asUser(t *testing.T, uid uint32, bin, mode, path string, keys int) roResult {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^TestReadOnlyChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), readOnlyEnv+"="+mode, "TOLLGATE_CHILD_DB="+path, fmt.Sprintf("TOLLGATE_CHILD_KEYS=%d", keys), "HOME=/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	cmd.Dir = "/"
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s as nobody: %v\n%s", mode, err, out)
	}
	var r roResult
	for _, line := range strings.Split(string(out), "\n") {
		if json.Unmarshal([]byte(line), &r) == nil {
			return r
		}
	}
	t.Fatalf("%s as nobody: no result in %q", mode, out)
	return r
}

// folder lists the names in dir, each with its mode.
func folder(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %04o", e.Name(), fi.Mode().Perm()))
	}
	return out
}

// TestReadOnlyLayouts: whatever way a ledger was made read-only (the
// owner's 0400 file, side files and 0500 folder; a 0444 file in a 0755
// folder; with or without the side files a process left), every reading
// command reads it, as root (whom the bits do not stop) and as the owner,
// sees every committed row, and creates no file beside it; a writer is
// refused with an error that names the file as read-only. A log with rows
// but no index cannot be read without creating the index: that is refused
// by name, creating nothing.
func TestReadOnlyLayouts(t *testing.T) {
	sqliteOnly(t)
	const keys = 3
	layouts := []struct {
		name      string
		file, dir os.FileMode
		sides     string // "none", "left" (an empty -wal and a -shm), "live" (rows in -wal), "wal only"
		// sideMode is the side files' mode when not the file's: a
		// writer's 0600 files beside a file made 0444; the layout is
		// then also read as a user who is neither its owner nor root.
		sideMode os.FileMode
	}{
		{"owner froze file and folder", 0o400, 0o500, "none", 0},
		{"owner froze file, side files and folder", 0o400, 0o500, "left", 0},
		{"owner froze it while a process had it open", 0o400, 0o500, "live", 0},
		{"0444 file in a 0755 folder", 0o444, 0o755, "none", 0},
		{"0444 file and side files in a 0755 folder", 0o444, 0o755, "left", 0},
		{"0444 file open elsewhere in a 0755 folder", 0o444, 0o755, "live", 0},
		{"writable file in a 0500 folder", 0o600, 0o500, "none", 0},
		{"log with rows but no index, frozen", 0o400, 0o500, "wal only", 0},
		{"log with rows but no index, 0444", 0o444, 0o755, "wal only", 0},
		{"a reader's layout: 0444 file, the writer's 0600 side files, 0555 folder", 0o444, 0o555, "left", 0o600},
		{"the same with rows in the log", 0o444, 0o555, "live", 0o600},
	}
	base := t.TempDir()
	// The other user must reach the layouts and run the test binary.
	for _, d := range []string{filepath.Dir(base), base} {
		os.Chmod(d, 0o755)
	}
	bin := ""
	if os.Geteuid() == 0 {
		bin = filepath.Join(base, "ledger.test")
		copyBinary(t, os.Args[0], bin)
	}
	for i, l := range layouts {
		if testing.Short() && i > 0 && layouts[i-1].file == l.file && layouts[i-1].dir == l.dir {
			// -short (CI's race run, after the plain run has tried every
			// layout): one layout per permission pair; each runs the race
			// detector's test binary again as another user.
			continue
		}
		t.Run(l.name, func(t *testing.T) {
			dir := filepath.Join(base, fmt.Sprint(i))
			path := makeLayout(t, dir, keys, l.sides)
			if os.Geteuid() == 0 {
				filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, nobody, nobody) })
			}
			names, _ := filepath.Glob(path + "*")
			for _, n := range names {
				os.Chmod(n, l.file)
				if l.sideMode != 0 && n != path {
					os.Chmod(n, l.sideMode)
				}
			}
			os.Chmod(dir, l.dir)
			t.Cleanup(func() { os.Chmod(dir, 0o700) })
			before := folder(t, dir)
			want := keys
			if l.sides == "live" || l.sides == "wal only" {
				want = keys + 2
			}
			check := func(who string, r roResult) {
				t.Helper()
				if l.sides == "wal only" {
					if !r.ReadOnly || !strings.Contains(r.Err, path+"-wal") || !strings.Contains(r.Err, path+"-shm") {
						t.Errorf("%s: read = %+v; want a refusal naming the log and the missing index", who, r)
					}
				} else if r.Err != "" || len(r.Keys) != keys || r.Listed != want || r.Verified != int64(want) || r.LedgerID == "" {
					t.Errorf("%s: read = %+v; want %d keys listed and verified", who, r, want)
				}
				if after := folder(t, dir); !slices.Equal(after, before) {
					t.Errorf("%s: reading changed the folder:\n before %v\n after  %v", who, before, after)
				}
			}
			check("root", readAll(path, keys))
			if bin != "" {
				check("owner", asNobody(t, bin, "read", path, keys))
			}
			if bin != "" && l.sideMode != 0 {
				// Another user: the file alone, immutable, when the log
				// is empty; a refusal saying why and what to do when the
				// log holds rows it may not read. Nothing is created.
				r := asUser(t, otherUser, bin, "read", path, keys)
				if l.sides == "live" {
					if !r.ReadOnly || !strings.Contains(r.Err, path+"-wal") || !strings.Contains(r.Err, "chmod a+r") {
						t.Errorf("other user: read = %+v; want a refusal naming the log it may not read and what to do", r)
					}
				} else if r.Err != "" || len(r.Keys) != keys || r.Listed != keys || r.Verified != int64(keys) {
					t.Errorf("other user: read = %+v; want %d keys listed and verified", r, keys)
				}
				if after := folder(t, dir); !slices.Equal(after, before) {
					t.Errorf("other user: reading changed the folder:\n before %v\n after  %v", before, after)
				}
			}
			checkWrite := func(who string, r roResult) {
				t.Helper()
				if !r.ReadOnly || !strings.Contains(r.Err, path) || !strings.Contains(r.Err, "read-only") {
					t.Errorf("%s: write = %+v; want ErrReadOnly naming %s as read-only", who, r, path)
				}
				if after := folder(t, dir); !slices.Equal(after, before) {
					t.Errorf("%s: a refused write changed the folder:\n before %v\n after  %v", who, before, after)
				}
			}
			if l.sides != "wal only" {
				checkWrite("root", writeOne(path))
				if bin != "" {
					checkWrite("owner", asNobody(t, bin, "write", path, keys))
				}
			}
		})
	}
}

// makeLayout makes a ledger in dir holding keys k:0.. and, by sides, the
// side files a process would leave beside it: none (every process closed
// it), "left" (an empty log and an index, as a read-only process leaves
// them), "live" (two more keys still in the log, as while another process
// holds it open), "wal only" (that log without its index, as a copy
// of the folder that skipped the -shm has).
func makeLayout(t *testing.T, dir string, keys int, sides string) string {
	t.Helper()
	path := filepath.Join(dir, "ledger.db")
	record := func(from, to int) {
		s, err := Open(ctx, path, Options{NoWriterQueue: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			if _, err := s.Record(ctx, fmt.Sprintf("k:%d", i), Payload{"a", "b", "c"}, RecordOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	record(0, keys)
	switch sides {
	case "left":
		holdOpen(t, path).Close()
	case "live", "wal only":
		// An open connection keeps the closing store from folding its
		// log into the file.
		db := holdOpen(t, path)
		record(keys, keys+2)
		if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
			t.Fatalf("no rows in the log to test with: %v", err)
		}
		if sides == "wal only" {
			live := path + ".live"
			for _, s := range []string{"", "-wal", "-shm"} {
				os.Rename(path+s, live+s)
			}
			copyFile(t, live, path)
			db.Close()
			for _, s := range []string{"", "-wal", "-shm"} {
				os.Remove(live + s)
			}
			break
		}
		t.Cleanup(func() { db.Close() })
	}
	return path
}

// holdOpen is a plain connection to path that has read from it (a raw
// read-only one leaves an empty -wal and a -shm when it closes).
func holdOpen(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM intents").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return db
}

// copyBinary copies the test binary to a place another user can run it.
func copyBinary(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

package cli_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	_ "modernc.org/sqlite"

	"github.com/tollgate-dev/tollgate/internal/testdata"
)

// TestEveryBoundRefusedBeforeTheLedger: each out-of-bounds value is
// refused with exit 3 (or 2 for usage) naming its rule, and the ledger
// path, folder included, still does not exist afterwards.
func TestEveryBoundRefusedBeforeTheLedger(t *testing.T) {
	db := filepath.Join(t.TempDir(), "not", "yet", "ledger.db")
	pay := []string{"--kind", "a", "--target", "t", "--body", "b"}
	tests := []struct {
		args []string
		code int
		rule string
	}{
		{append([]string{"guard", "k", "--lease", "0"}, pay...), 3, "a lease is between 1s and 168h0m0s"},
		{append([]string{"guard", "k", "--lease", "200h"}, pay...), 3, "a lease is between"},
		{append([]string{"guard", "k", "--wait", "-1s"}, pay...), 3, "--wait is between"},
		{append([]string{"guard", "k", "--agent", "bot\x1b[31m"}, pay...), 3, "control or format characters"},
		{append([]string{"guard", "k", "--agent", strings.Repeat("a", 201)}, pay...), 3, "at most 200 bytes"},
		{append([]string{"record", "k", "--agent", "bot\u200b"}, pay...), 3, "control or format characters"},
		{[]string{"policy", "set", "email", "--mode", "approval", "--ttl", "0", "--operator", "root"}, 3, "a TTL is between"},
		{[]string{"policy", "set", "email", "--mode", "approval", "--ttl", "9000h", "--operator", "root"}, 3, "a TTL is between"},
		{[]string{"policy", "set", strings.Repeat("x", 201), "--mode", "auto", "--operator", "root"}, 3, "1 to 200 characters"},
		{[]string{"policy", "set", "a\x07", "--mode", "auto", "--operator", "root"}, 3, "no control characters"},
		{[]string{"policy", "set", "a", "--mode", "maybe", "--operator", "root"}, 3, "use auto, approval or deny"},
		{[]string{"report", "k", "--permit", "p", "--outcome", "succeeded", "--latency", "-1s"}, 3, "a latency is between"},
		{[]string{"report", "k", "--permit", "p", "--outcome", "succeeded", "--ref", strings.Repeat("r", 4001)}, 3, "ref must be at most 4000 bytes"},
		{[]string{"report", "k", "--permit", "p", "--outcome", "maybe"}, 3, "use succeeded, failed or unknown"},
		{[]string{"reject", "k", "--reason", strings.Repeat("r", 4001), "--operator", "alice"}, 3, "reason must be at most"},
		{[]string{"approve", "k", "--operator", "alice\r"}, 3, "control or format characters"},
		{[]string{"approve", "k", "--operator", strings.Repeat("o", 201)}, 3, "at most 200 bytes"},
		{[]string{"epoch", "activate", "--epoch", "NOT-A-UUID", "--operator", "root"}, 3, "lowercase canonical UUID"},
		{[]string{"reconcile", "k", "--result", "maybe", "--note", "n", "--operator", "alice"}, 3, "use executed or not-executed"},
		{[]string{"reconcile", "k", "--result", "executed", "--note", strings.Repeat("n", 4001), "--operator", "alice"}, 3, "note must be at most"},
		{[]string{"list", "--limit", "20000"}, 3, "--limit is between 1 and 10000"},
		{[]string{"list", "--limit", "-5"}, 3, "--limit is between 1 and 10000"},
		{[]string{"list", "--state", "fine"}, 3, "unknown state"},
		{append([]string{"guard", "k", "--kind", "b"}, pay...), 2, "given twice"},
	}
	for _, tc := range tests {
		r := run(t, db, "", tc.args...)
		want(t, r, tc.code)
		if !strings.Contains(r.stderr, tc.rule) {
			t.Errorf("%q: stderr %q does not name %q", tc.args, r.stderr, tc.rule)
		}
		if _, err := os.Stat(filepath.Dir(filepath.Dir(db))); !os.IsNotExist(err) {
			t.Fatalf("%q created the ledger's folder", tc.args)
		}
	}
}

// TestJSONForEveryUsageError: with --json, every refusal prints one
// object with error and exit_code, usage errors included.
func TestJSONForEveryUsageError(t *testing.T) {
	db := newDB(t)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"guard", "--json"}, 2},
		{[]string{"guard", "k", "--json", "--no-such-flag"}, 2},
		{[]string{"guard", "k", "--json", "--body", "b", "--body-file", "f", "--kind", "a", "--target", "t"}, 2},
		{[]string{"reject", "k", "--json", "--operator", "alice"}, 2},
		{[]string{"frobnicate", "--json"}, 2},
		{[]string{"policy", "--json"}, 2},
		{[]string{"--no-such-global", "status", "--json"}, 2},
		{[]string{"guard", "k", "--json", "--kind", "a", "--kind", "b", "--target", "t", "--body", "b"}, 2},
		{[]string{"status", "never:seen", "--json"}, 7},
	} {
		r := run(t, db, "", tc.args...)
		want(t, r, tc.code)
		var m map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &m); err != nil || m["error"] == nil || m["exit_code"] != float64(tc.code) {
			t.Errorf("%q: stdout %q is not {error, exit_code: %d}", tc.args, r.stdout, tc.code)
		}
	}
}

// TestEveryOutputEscaped: hostile text in flags and arguments reaches
// neither stderr nor stdout raw, and --json escapes C1, DEL and format
// characters as \uXXXX.
func TestEveryOutputEscaped(t *testing.T) {
	db := newDB(t)
	hostile := "--\x1b]0;pwned\x07\u009b2J\u202e\u200b\x7f"
	for _, args := range [][]string{
		{"guard", "k:1", hostile},
		{"guard", "k:1", "--json", hostile},
		{hostile, "--json"},
		{"status", hostile},
		{"policy", "set", "x", "--mode", hostile, "--operator", "root", "--json"},
	} {
		r := run(t, db, "", args...)
		for _, out := range []string{r.stdout, r.stderr} {
			if strings.ContainsAny(out, "\x1b\x07\u009b\u202e\u200b\x7f") {
				t.Errorf("%q: raw control or format character in %q", args, out)
			}
		}
	}
	// An agent-facing JSON answer that carries stored text: a conflict's
	// key is plain, so check a policy pattern with a bidi override.
	r := run(t, db, "", "policy", "set", "x\u202e*", "--mode", "auto", "--operator", "root", "--json")
	want(t, r, 0)
	if strings.Contains(r.stdout, "\u202e") || !strings.Contains(r.stdout, `\u202e`) {
		t.Fatalf("JSON did not escape U+202E: %q", r.stdout)
	}
}

// fileKinds makes one file of each kind a --db path may name.
func fileKinds(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	kinds := map[string]string{}
	kinds["empty"] = filepath.Join(dir, "empty.db")
	os.WriteFile(kinds["empty"], nil, 0o600)
	kinds["not sqlite"] = filepath.Join(dir, "notes.txt")
	os.WriteFile(kinds["not sqlite"], bytes.Repeat([]byte("my notes\n"), 500), 0o600)
	kinds["another app"] = filepath.Join(dir, "app.db")
	sqlExec(t, kinds["another app"], "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES ('ann')")
	kinds["another app with events"] = filepath.Join(dir, "app2.db")
	sqlExec(t, kinds["another app with events"], "CREATE TABLE intents(action_key TEXT PRIMARY KEY, payload_sha256 TEXT NOT NULL, status TEXT NOT NULL); CREATE TABLE events(id INTEGER)")
	kinds["fixture"] = filepath.Join(dir, "fixture.db")
	seed, err := sql.Open("sqlite", kinds["fixture"])
	if err != nil {
		t.Fatal(err)
	}
	testdata.WriteSeedLedger(t, seed, strings.Repeat("a", 64), "fixture-article-v1")
	seed.Close()
	kinds["ledger"] = filepath.Join(dir, "ledger.db")
	cmd := exec.Command(bin, "--db", kinds["ledger"], "record", "k", "--kind", "a", "--target", "t", "--body", "b")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	kinds["dangling link"] = filepath.Join(dir, "dangling.db")
	os.Symlink(filepath.Join(dir, "nowhere", "x.db"), kinds["dangling link"])
	kinds["directory"] = filepath.Join(dir, "adir")
	os.Mkdir(kinds["directory"], 0o700)
	kinds["device"] = "/dev/null"
	return kinds
}

func sqlExec(t *testing.T, path, q string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
}

func fileBytes(path string) string {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return "not a regular file"
	}
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestReadingCommandsChangeNoFile: status, list, verify, export and epoch
// show never create, migrate or change a file, whatever it is; writing
// commands refuse every file that is not a ledger or the seed fixture's,
// leaving its bytes as they were, and name what it is.
func TestReadingCommandsChangeNoFile(t *testing.T) {
	kinds := fileKinds(t)
	reading := [][]string{{"status", "k"}, {"list"}, {"verify"}, {"export"}, {"epoch", "show"}}
	for name, path := range kinds {
		before := fileBytes(path)
		for _, args := range reading {
			r := run(t, path, "", args...)
			if name == "ledger" {
				if r.code != 0 {
					t.Errorf("%s: %v exit %d: %s", name, args, r.code, r.stderr)
				}
			} else if r.code == 0 {
				t.Errorf("%s: %v succeeded on a file that is not a current ledger", name, args)
			}
			if got := fileBytes(path); got != before {
				t.Fatalf("%s: %v changed the file", name, args)
			}
		}
	}
	names := map[string]string{"empty": "empty file", "not sqlite": "not a tollgate ledger", "another app": "another application",
		"another app with events": "another application", "dangling link": "dangling", "directory": "is a directory", "device": "is a device"}
	for name, rule := range names {
		path := kinds[name]
		before := fileBytes(path)
		r := run(t, path, "", "record", "k", "--kind", "a", "--target", "t", "--body", "b")
		if r.code == 0 || !strings.Contains(r.stderr, rule) {
			t.Errorf("%s: record exit %d, stderr %q; want a refusal naming %q", name, r.code, r.stderr, rule)
		}
		if got := fileBytes(path); got != before {
			t.Fatalf("%s: a refused write changed the file", name)
		}
		if _, err := os.Stat(path + "-journal"); err == nil {
			t.Fatalf("%s: a journal was left beside it", name)
		}
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(kinds["dangling link"]), "nowhere")); !os.IsNotExist(err) {
		t.Fatal("the dangling link's target folder was created")
	}
	// The seed fixture's file is migrated by a writing command, keeping its row.
	want(t, run(t, kinds["fixture"], "", "record", "k", "--kind", "a", "--target", "t", "--body", "b"), 0)
	r := run(t, kinds["fixture"], "", "status", "fixture-article-v1")
	want(t, r, 0)
}

// TestFailedMigrationLeavesEveryByte: a fixture-shaped file on which
// making the schema fails (a trigger named like one of tollgate's already
// exists) keeps every byte, the journal-mode header bytes included.
func TestFailedMigrationLeavesEveryByte(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	sqlExec(t, path, "CREATE TABLE intents (action_key TEXT PRIMARY KEY, payload_sha256 TEXT NOT NULL, status TEXT NOT NULL CHECK(status = 'recorded')); "+
		"CREATE TRIGGER intents_no_update BEFORE UPDATE ON intents BEGIN SELECT 1; END; INSERT INTO intents VALUES ('a', '"+strings.Repeat("b", 64)+"', 'recorded')")
	before := fileBytes(path)
	r := run(t, path, "", "record", "k", "--kind", "a", "--target", "t", "--body", "b")
	if r.code == 0 || !strings.Contains(r.stderr, "trigger intents_no_update already exists") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := fileBytes(path); got != before {
		t.Fatalf("a failed migration changed the file (header bytes 18-19: %v -> %v)", []byte(before[18:20]), []byte(got[18:20]))
	}
}

// TestBackupNeverPartialNeverReplaces: a backup writes to a temporary
// file and links it into place; an existing file, a symbolic link, a
// directory or a device as the target is refused by name; a backup
// process killed midway leaves nothing at the target.
func TestBackupNeverPartialNeverReplaces(t *testing.T) {
	sqliteOnly(t)
	db := newDB(t)
	for i := 0; i < 200; i++ {
		want(t, run(t, db, "", "record", "k:"+strconv.Itoa(i), "--kind", "a", "--target", "t", "--body", strings.Repeat("x", 3000)), 0)
	}
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	os.WriteFile(existing, []byte("keep me"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(filepath.Join(dir, "target"), link)
	for target, rule := range map[string]string{existing: "(a file)", link: "(a symbolic link)", dir: "(a directory)", "/dev/null": "(a device)"} {
		r := run(t, db, "", "backup", target)
		if r.code != 3 || !strings.Contains(r.stderr, rule) {
			t.Errorf("backup %s: exit %d, %q; want 3 naming %s", target, r.code, r.stderr, rule)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Fatal("backup replaced an existing file")
	}
	if _, err := os.Lstat(filepath.Join(dir, "target")); !os.IsNotExist(err) {
		t.Fatal("backup wrote through a symbolic link")
	}
	// Kill backups at staggered moments: the target is either absent or
	// a complete ledger that verifies.
	for i, delay := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		dest := filepath.Join(dir, "b"+strconv.Itoa(i)+".db")
		cmd := exec.Command(bin, "--db", db, "backup", dest)
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if _, err := os.Stat(dest); err == nil {
			want(t, run(t, dest, "", "verify"), 0)
		}
	}
	dest := filepath.Join(dir, "full.db")
	want(t, run(t, db, "", "backup", dest), 0)
	want(t, run(t, dest, "", "verify"), 0)
}

// TestWitnessCatchesACutTail: a verify records the head; deleting the
// last events with a sqlite3 shell (triggers dropped) is then caught.
func TestWitnessCatchesACutTail(t *testing.T) {
	sqliteOnly(t)
	db := newDB(t)
	for i := 0; i < 5; i++ {
		want(t, run(t, db, "", "record", "k:"+strconv.Itoa(i), "--kind", "a", "--target", "t", "--body", "b"), 0)
	}
	want(t, run(t, db, "", "verify"), 0)
	sqlExec(t, db, "DROP TRIGGER events_no_delete; DROP TRIGGER payloads_no_delete; DELETE FROM events WHERE seq > (SELECT max(seq) - 2 FROM events); DELETE FROM payloads WHERE action_key IN ('k:3', 'k:4')")
	r := run(t, db, "", "verify", "--json")
	want(t, r, 1)
	if !strings.Contains(r.stdout, "a witnessed head (event") {
		t.Fatalf("verify did not report the witnessed head: %s", r.stdout)
	}
	// Without the witness the chain looks whole (a limit the README names).
	r = run(t, db, "", "verify", "--witness", filepath.Join(t.TempDir(), "none"))
	if strings.Contains(r.stdout, "a witnessed head (event") {
		t.Fatalf("an empty witness reported a head: %s", r.stdout)
	}
}

// TestExportRefusesToVouch: evidence edited in the file (triggers
// dropped) is still exported, every line, but the edited line and the last
// line say unproven, and export exits 1 with a word on stderr.
func TestExportRefusesToVouch(t *testing.T) {
	sqliteOnly(t)
	db := newDB(t)
	for i := 0; i < 3; i++ {
		want(t, run(t, db, "", "record", "k:"+strconv.Itoa(i), "--kind", "a", "--target", "t", "--body", "b"), 0)
	}
	want(t, run(t, db, "", "export"), 0)
	sqlExec(t, db, "DROP TRIGGER payloads_no_update; UPDATE payloads SET agent = 'someone-else' WHERE action_key = 'k:1'")
	r := run(t, db, "", "export")
	want(t, r, 1)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], `"chain_verified":false`) || strings.Contains(lines[0]+lines[2], `"chain_verified":false`) ||
		!strings.Contains(lines[3], `"chain_verified":false`) || !strings.Contains(r.stderr, "(1 problem(s)") {
		t.Fatalf("export of an edited ledger:\n%s\nstderr: %s", r.stdout, r.stderr)
	}
}

// TestCorpusEscapedInStatus: every string of the shared corpus, stored as
// a kind, is shown by status exactly as the corpus says, never raw.
func TestCorpusEscapedInStatus(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ledger.db")
	for i, h := range testdata.HostileStrings(t) {
		key := "corpus:" + strconv.Itoa(i)
		if r := run(t, db, "", "record", key, "--kind", h.Text, "--target", "t", "--body", "b"); r.code != 0 {
			t.Fatalf("%s: record exit %d: %s", h.Name, r.code, r.stderr)
		}
		out := run(t, db, "", "status", key).stdout
		if !strings.Contains(out, "kind:         "+h.Escaped+"\n") {
			t.Errorf("%s: status does not show the kind as %q:\n%s", h.Name, h.Escaped, out)
		}
		if h.Text != h.Escaped && strings.Contains(out, h.Text) {
			t.Errorf("%s: status printed the raw text", h.Name)
		}
	}
	// export writes the same strings as JSON: read back exactly, with no
	// character a terminal would act on or hide left raw.
	r := run(t, db, "", "export")
	want(t, r, 0)
	for _, c := range strings.TrimSuffix(r.stdout, "\n") {
		if c != '\n' && (unicode.IsControl(c) || unicode.Is(unicode.Cf, c) || c == '\u2028' || c == '\u2029') {
			t.Fatalf("export wrote %U raw", c)
		}
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	kinds := map[string]string{}
	for _, l := range lines[:len(lines)-1] {
		var e struct{ Key, Kind string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		kinds[e.Key] = e.Kind
	}
	for i, h := range testdata.HostileStrings(t) {
		if got := kinds["corpus:"+strconv.Itoa(i)]; got != h.Text {
			t.Errorf("%s: export reads back %q", h.Name, got)
		}
	}
}

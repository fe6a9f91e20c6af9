package ledger

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/testdata"
)

func TestRecordCreateReplayConflict(t *testing.T) {
	s, _ := openTest(t)
	p := Payload{Kind: "refund", Target: "acct-9", Body: "refund 10 EUR"}
	first, err := s.Record(ctx, "refund:le-4411", p, RecordOptions{Agent: "agent-a"})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || first.Replayed || first.SHA256 != p.Digest() || first.State != StateRecorded {
		t.Fatalf("first record = %+v", first)
	}
	again, err := s.Record(ctx, "refund:le-4411", p, RecordOptions{Agent: "agent-b"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Created || !again.Replayed || again.SHA256 != first.SHA256 || again.Agent != "agent-a" {
		t.Fatalf("retry = %+v", again)
	}

	tests := []struct {
		name    string
		p       Payload
		differs []string
	}{
		{"body", Payload{"refund", "acct-9", "refund 99 EUR secret-1"}, []string{"body"}},
		{"target", Payload{"refund", "acct-1", "refund 10 EUR"}, []string{"target"}},
		{"all", Payload{"email", "x", "secret-body-2"}, []string{"kind", "target", "body"}},
	}
	for i, tc := range tests {
		_, err := s.Record(ctx, "refund:le-4411", tc.p, RecordOptions{Agent: "agent-c"})
		var ce *ConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: err = %v, want *ConflictError", tc.name, err)
		}
		if ce.StoredSHA256 != p.Digest() || !slices.Equal(ce.Differs, tc.differs) || ce.ConflictID != int64(i+1) || ce.State != StateRecorded {
			t.Fatalf("%s: conflict = %+v", tc.name, ce)
		}
		if strings.Contains(err.Error(), tc.p.Body) {
			t.Fatalf("conflict error shows the body: %v", err)
		}
	}
	// The stored hash never changed and every attempt is in the log.
	db := rawDB(t, s.Path())
	var h string
	var n int
	db.QueryRow("SELECT payload_sha256 FROM intents WHERE action_key = 'refund:le-4411'").Scan(&h)
	db.QueryRow("SELECT count(*) FROM conflicts WHERE action_key = 'refund:le-4411' AND attempted IS NOT NULL").Scan(&n)
	if h != p.Digest() || n != 3 {
		t.Fatalf("stored hash %s, %d conflicts logged", h, n)
	}
	rep, err := s.Verify(ctx)
	// ledger_created, recorded and three conflicts.
	if err != nil || !rep.OK() || rep.Events != 5 {
		t.Fatalf("verify = %+v, %v", rep, err)
	}
}

func TestRecordRedacted(t *testing.T) {
	s, _ := openTest(t)
	p := Payload{Kind: "email", Target: "alice@example.com", Body: "secret-token-123"}
	if _, err := s.Record(ctx, "email:welcome-1", p, RecordOptions{Redact: true}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Record(ctx, "email:welcome-1", p, RecordOptions{})
	if err != nil || !got.Redacted || !got.Retained {
		t.Fatalf("replay = %+v, %v", got, err)
	}
	// A conflict still names the differing field from the field digests.
	_, err = s.Record(ctx, "email:welcome-1", Payload{"email", "alice@example.com", "other"}, RecordOptions{Redact: true})
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Differs, []string{"body"}) {
		t.Fatalf("conflict = %v", err)
	}
	raw, _ := os.ReadFile(s.Path())
	wal, _ := os.ReadFile(s.Path() + "-wal")
	if strings.Contains(string(raw)+string(wal), "secret-token-123") || strings.Contains(string(raw)+string(wal), "alice@example.com") {
		t.Fatal("redacted text reached the ledger file")
	}
}

func TestRecordRefusesBadInputBeforeSQL(t *testing.T) {
	s, _ := openTest(t)
	tests := []struct {
		key string
		p   Payload
	}{
		{"Bad Key", Payload{"k", "t", "b"}},
		{"ok", Payload{"k", "t", strings.Repeat("x", MaxFieldRunes+1)}},
		{"ok", Payload{"k", "\xff", "b"}},
	}
	for _, tc := range tests {
		if _, err := s.Record(ctx, tc.key, tc.p, RecordOptions{}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Record(%q) err = %v, want ErrInvalidInput", tc.key, err)
		}
	}
	var n int
	rawDB(t, s.Path()).QueryRow("SELECT count(*) FROM events WHERE type != 'ledger_created'").Scan(&n)
	if n != 0 {
		t.Fatalf("%d events written for refused input", n)
	}
}

// fixtureCreate and fixtureInsert are the seed fixture's two statements,
// from testdata/seed_fixture.sql.
var fixtureCreate, fixtureInsert = testdata.SeedFixture()

// fixturePython records an intent the way the seed fixture does, with the
// system's Python and its own SQLite library.
const fixturePython = `import sys, json, hashlib, sqlite3
db = sqlite3.connect(sys.argv[1])
p = {"kind": "draft", "target": "fixture-article", "body": "Fixture text"}
h = hashlib.sha256(json.dumps(p, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode("utf-8")).hexdigest()
with db:
    db.execute(sys.argv[2])
    cur = db.execute(sys.argv[3], (sys.argv[4], h))
    print(cur.rowcount)
db.close()
`

func runFixture(t *testing.T, path, key string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed; the fixture compatibility test needs it")
	}
	out, err := exec.Command(py, "-c", fixturePython, path, fixtureCreate, fixtureInsert, key).CombinedOutput()
	if err != nil {
		t.Fatalf("fixture: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestFixtureRecordsIntoTollgateLedger(t *testing.T) {
	sqliteOnly(t)
	s, _ := openTest(t)
	if got := runFixture(t, s.Path(), "fixture-article-v1"); got != "1" {
		t.Fatalf("fixture insert rowcount %s", got)
	}
	p := Payload{Kind: "draft", Target: "fixture-article", Body: "Fixture text"}
	in, err := s.Record(ctx, "fixture-article-v1", p, RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Created || !in.Replayed || in.Retained || in.SHA256 != p.Digest() || in.State != StateRecorded {
		t.Fatalf("tollgate's view of the fixture intent = %+v", in)
	}
	if _, err := s.Record(ctx, "fixture-article-v1", Payload{"draft", "fixture-article", "changed"}, RecordOptions{}); !errors.As(err, new(*ConflictError)) {
		t.Fatalf("changed payload on fixture key: %v", err)
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || rep.External != 1 {
		t.Fatalf("verify = %+v, %v", rep, err)
	}
	// And a replay from the fixture sees tollgate's row untouched.
	if got := runFixture(t, s.Path(), "fixture-article-v1"); got != "0" {
		t.Fatalf("fixture replay rowcount %s", got)
	}
}

func TestOpenFixtureMadeLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fixture.db")
	db := rawDB(t, path)
	p := Payload{Kind: "draft", Target: "fixture-article", Body: "Fixture text"}
	testdata.WriteSeedLedger(t, db.DB, p.Digest(), "fixture-article-v1", "fixture-article-v2")
	db.Close()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := s.Record(ctx, "fixture-article-v2", p, RecordOptions{})
	if err != nil || !in.Replayed || in.Retained {
		t.Fatalf("record on migrated fixture ledger = %+v, %v", in, err)
	}
	rows, err := s.List(ctx, Filter{})
	if err != nil || len(rows) != 2 {
		t.Fatalf("list after migration = %d rows, %v", len(rows), err)
	}
	raw := rawDB(t, path)
	var n int
	var v int
	raw.QueryRow("SELECT count(*) FROM intents WHERE payload_sha256 = ? AND status = 'recorded'", p.Digest()).Scan(&n)
	raw.QueryRow("PRAGMA user_version").Scan(&v)
	if n != 2 || v != SchemaVersion() {
		t.Fatalf("after migration: %d fixture rows intact, user_version %d", n, v)
	}
}

func TestAppendOnlyAgainstPlainSQL(t *testing.T) {
	s, _ := openTest(t)
	p := Payload{"refund", "t", "b"}
	s.Record(ctx, "k1", p, RecordOptions{})
	s.Record(ctx, "k1", Payload{"refund", "t", "c"}, RecordOptions{})
	db := rawDB(t, s.Path())
	stmts := []string{
		"UPDATE intents SET payload_sha256 = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'",
		"DELETE FROM intents",
		"UPDATE payloads SET canonical = '{}'",
		"DELETE FROM payloads",
		"UPDATE conflicts SET differs = ''",
		"DELETE FROM conflicts",
		"UPDATE events SET actor = 'x'",
		"DELETE FROM events",
		"DELETE FROM action_index",
		"UPDATE chain_head SET seq = 0",
		"DELETE FROM chain_head",
	}
	if onPostgres {
		// The owner's own connection: the triggers hold for it too.
		for _, t := range factTables {
			stmts = append(stmts, "DELETE FROM "+t.name, "TRUNCATE "+t.name+" CASCADE", "UPDATE "+t.name+" SET "+strings.SplitN(t.cols, ",", 2)[0]+" = "+strings.SplitN(t.cols, ",", 2)[0])
		}
		stmts = append(stmts, "TRUNCATE intents CASCADE", "TRUNCATE events", "TRUNCATE action_index", "TRUNCATE chain_head")
	} else {
		stmts = append(stmts,
			"INSERT OR REPLACE INTO intents VALUES ('k1', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'recorded')",
			"INSERT OR REPLACE INTO payloads SELECT * FROM payloads",
			"REPLACE INTO events SELECT * FROM events WHERE seq = 1",
			"INSERT OR REPLACE INTO conflicts SELECT * FROM conflicts",
			"INSERT INTO intents VALUES ('k2', 'not-a-hash', 'recorded')")
	}
	for _, q := range stmts {
		_, err := db.Exec(q)
		if err == nil {
			t.Errorf("%s: succeeded", q)
			continue
		}
		if m := s.eng.MapError(err); !errors.Is(m, ErrAppendOnly) {
			t.Errorf("%s: %v is not mapped to ErrAppendOnly", q, err)
		}
	}
	rep, _ := s.Verify(ctx)
	if !rep.OK() {
		t.Fatalf("verify after refused tampering: %+v", rep)
	}
}

func TestVerifyCatchesTampering(t *testing.T) {
	tests := []struct {
		name  string
		edit  string
		table string
		row   string
	}{
		{"payload", "UPDATE payloads SET canonical = replace(canonical, 'b1', 'b2') WHERE action_key = 'k1'", "payloads", `action_key=k1`},
		{"intent hash", "UPDATE intents SET payload_sha256 = 'cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc' WHERE action_key = 'k2'", "intents", `action_key=k2`},
		{"event", "UPDATE events SET actor = 'mallory' WHERE seq = 2", "events", "seq=2"},
		{"deleted event", "DELETE FROM events WHERE seq = 2", "events", "seq=3"},
		{"conflict", "UPDATE conflicts SET attempted = replace(attempted, 'zz', 'yy')", "conflicts", "id=1"},
		{"index stage", "UPDATE action_index SET stage = 'succeeded' WHERE action_key = 'k1'", "action_index", `action_key=k1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t)
			s.Record(ctx, "k1", Payload{"a", "t", "b1"}, RecordOptions{})
			s.Record(ctx, "k2", Payload{"a", "t", "b2"}, RecordOptions{})
			s.Record(ctx, "k3", Payload{"a", "t", "b3"}, RecordOptions{})
			s.Record(ctx, "k3", Payload{"a", "t", "zz"}, RecordOptions{})
			s.Close()
			requireNamed(t, verifyTampered(t, testPath(s), tc.edit), tc.table, tc.row)
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal"} {
		src, err := os.Open(from + suffix)
		if err != nil {
			continue
		}
		dst, err := os.Create(to + suffix)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(dst, src)
		src.Close()
		dst.Close()
	}
}

func TestFileModesAndDefaultPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "tollgate")
	s, err := Open(ctx, filepath.Join(dir, "ledger.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Record(ctx, "k", Payload{"a", "b", "c"}, RecordOptions{})
	s.Close()
	fi, _ := os.Stat(filepath.Join(dir, "ledger.db"))
	di, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("file mode %v, folder mode %v", fi.Mode().Perm(), di.Mode().Perm())
	}

	t.Setenv("TOLLGATE_DB", "")
	t.Setenv("XDG_DATA_HOME", "/xdg")
	if p, _ := DefaultPath(); p != "/xdg/tollgate/ledger.db" {
		t.Fatalf("XDG default = %s", p)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/op")
	if p, _ := DefaultPath(); p != "/home/op/.local/share/tollgate/ledger.db" {
		t.Fatalf("home default = %s", p)
	}
	t.Setenv("TOLLGATE_DB", "/env/ledger.db")
	if p, _ := DefaultPath(); p != "/env/ledger.db" {
		t.Fatalf("env default = %s", p)
	}
}

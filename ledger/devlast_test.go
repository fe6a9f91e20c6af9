package ledger

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/internal/snapshot"
	"github.com/tollgate-dev/tollgate/ledger/engine"
	"github.com/tollgate-dev/tollgate/ledger/sqlite"
)

// devLastHead is the chain head testdata/dev20_ledger.sql.gz was made with.
var devLastHead = Head{LedgerID: "6f1c2a3b-4d5e-4f60-8a7b-000000000001", Seq: 64, Hash: "1f75e70bbd2bfa142e63003a98420948b07ed280a18f1e33adb331a8a4153c9b"}

// isDevLastHead reports whether h is devLastHead, wherever it was read.
func isDevLastHead(h Head) bool {
	return h.LedgerID == devLastHead.LedgerID && h.Seq == devLastHead.Seq && h.Hash == devLastHead.Hash
}

// devLastExportedAt is the clock its export was written at.
var devLastExportedAt = newClock().Now().Add(2 * time.Second)

// devLastLedger is testdata/dev20_ledger.sql.gz, made by the build of the
// last development schema (SQLite 20), loaded into a file as that build
// left it.
func devLastLedger(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dev20.db")
	script, err := snapshot.Read("testdata/dev20_ledger.sql.gz")
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	if _, err := db.Exec(script); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d; PRAGMA journal_mode = WAL", sqlite.ApplicationID, sqlite.DevLast)); err != nil {
		t.Fatal(err)
	}
	h := Head{LedgerID: devLastHead.LedgerID}
	if err := db.QueryRow("SELECT seq, hash FROM chain_head").Scan(&h.Seq, &h.Hash); err != nil || !isDevLastHead(h) {
		t.Fatalf("the fixture's head is %+v (%v), not the one it was made with", h, err)
	}
	db.Close()
	return path
}

// tableRows is every row of every table of the SQLite file at path, as
// text, table by table in key order.
func tableRows(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, tb := range tables {
		rows, err := db.Query(`SELECT * FROM "` + tb + `" ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			v := make([]any, len(cols))
			p := make([]any, len(cols))
			for i := range v {
				p[i] = &v[i]
			}
			rows.Scan(p...)
			fmt.Fprintf(&b, "%s %q\n", tb, v)
		}
		rows.Close()
	}
	return b.String()
}

// TestDevLastLedgerCarriedToBaseline: a ledger the last development
// build made (every kind of fact but archives, signed and unsigned) is
// carried to the baseline on its next writing open, keeping every row
// of every table and its head: verify proves the head it had, export
// writes the very bytes that build's export wrote, and it takes new
// writes as any ledger does.
func TestDevLastLedgerCarriedToBaseline(t *testing.T) {
	sqliteOnly(t)
	path := devLastLedger(t)
	before := tableRows(t, path)
	if strings.Count(before, "\n") < 130 {
		t.Fatalf("the fixture holds %d rows: it proves less than it says", strings.Count(before, "\n"))
	}
	if _, err := Open(ctx, path, Options{ReadOnly: true}); !errors.Is(err, ErrNeedsMigration) {
		t.Fatalf("a read-only open of the development ledger: %v, want ErrNeedsMigration", err)
	}
	clk := &clock{t: devLastExportedAt}
	s, err := Open(ctx, path, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion() {
		t.Fatalf("schema %d (%v) after the step, want %d", v, err, SchemaVersion())
	}
	if after := tableRows(t, path); after != before {
		t.Fatal("the step changed a row")
	}
	var fk int
	if err := s.w.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign keys on the writer after the step: %d, %v", fk, err)
	}
	var ic string
	if err := s.w.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
		t.Fatalf("integrity_check after the step: %s %v", ic, err)
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || !isDevLastHead(rep.Head()) {
		t.Fatalf("verify after the step: %+v %v %v", rep.Head(), err, rep.Problems)
	}
	want, err := os.ReadFile("testdata/dev20_ledger.export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := s.Export(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		g, w := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Fatalf("export line %d differs from the development build's:\nnow:    %.400s\nbefore: %.400s", i+1, g[i], w[i])
			}
		}
		t.Fatalf("export has %d lines, the development build's %d", len(g), len(w))
	}
	// An identical retry is answered from the stored facts, a changed
	// payload is a conflict, and a new key is guarded.
	cx, err := ParseContext([]byte(`{"amount": 20}`))
	if err != nil {
		t.Fatal(err)
	}
	if a, err := s.Guard(ctx, "k:refund", Payload{"refund.card", "acct-1", "20 EUR"}, GuardOptions{Agent: "bot1", Context: cx}); err != nil || !a.Replayed || a.State != StateSucceeded {
		t.Fatalf("retry after the step: %+v, %v", a, err)
	}
	if _, err := s.Guard(ctx, "k:refund", Payload{"refund.card", "acct-1", "21 EUR"}, GuardOptions{Agent: "bot1"}); !errors.As(err, new(*ConflictError)) {
		t.Fatalf("a different payload after the step: %v", err)
	}
	if a, err := s.Guard(ctx, "hsr1:6f1c2a3b-4d5e-4f60-8a7b-000000000004:auto-new", Payload{"auto.x", "t", "b"}, GuardOptions{Agent: "bot3"}); err != nil || a.PermitID == "" {
		t.Fatalf("a new key after the step: %+v, %v", a, err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify after writing on the stepped ledger: %v %v", err, rep.Problems)
	}
}

// TestDevLastLedgerCopiesToPostgres: migrate --from of a ledger the last
// development build made (carried to the baseline by its first writing
// open, which 'tollgate migrate' is) verifies on PostgreSQL with the head
// it had.
func TestDevLastLedgerCopiesToPostgres(t *testing.T) {
	sqliteOnly(t)
	path := devLastLedger(t)
	s, err := Open(ctx, path, Options{Now: (&clock{t: devLastExportedAt}).Now})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	dst := pgtest.DB(t)
	head, err := CopyToPostgres(ctx, path, dst)
	if err != nil || !isDevLastHead(head) {
		t.Fatalf("copy: head %+v, %v; want %+v", head, err, devLastHead)
	}
	pg := openAt(t, dst)
	if rep, err := pg.Verify(ctx); err != nil || !rep.OK() || !isDevLastHead(rep.Head()) {
		t.Fatalf("verify on PostgreSQL: %+v %v %v", rep.Head(), err, rep.Problems)
	}
}

// TestOlderDevelopmentLedgersRefused: a ledger at any development schema
// but the last is refused by every open, by a message that says what to
// do with it, and its bytes stay as they were.
func TestOlderDevelopmentLedgersRefused(t *testing.T) {
	sqliteOnly(t)
	for _, v := range []int{4, 19, sqlite.DevLast + 1, engine.Baseline - 1} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			db := rawDB(t, path)
			if _, err := db.Exec(fmt.Sprintf(`CREATE TABLE intents (action_key TEXT PRIMARY KEY, payload_sha256 TEXT NOT NULL, status TEXT NOT NULL);
				CREATE TABLE events (seq INTEGER PRIMARY KEY); CREATE TABLE action_index (id INTEGER PRIMARY KEY);
				PRAGMA application_id = %d; PRAGMA user_version = %d`, sqlite.ApplicationID, v)); err != nil {
				t.Fatal(err)
			}
			if v < 5 {
				db.Exec("PRAGMA application_id = 0") // before schema 5, known by its tables
			}
			db.Close()
			bytesBefore, _ := os.ReadFile(path)
			for _, ro := range []bool{false, true} {
				_, err := Open(ctx, path, Options{ReadOnly: ro})
				if !errors.Is(err, ErrDevelopmentSchema) || !strings.Contains(err.Error(), fmt.Sprintf("schema version %d", v)) ||
					!strings.Contains(err.Error(), fmt.Sprintf("build of schema %d", sqlite.DevLast)) {
					t.Fatalf("open (read-only %v): %v", ro, err)
				}
			}
			if after, _ := os.ReadFile(path); !slices.Equal(after, bytesBefore) {
				t.Fatal("the refused file changed")
			}
		})
	}
}

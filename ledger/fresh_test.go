package ledger

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/ledger/sqlite"
)

// TestNewLedgerIsAMigratedOne makes a ledger from schema.sql and one by
// replaying every migration, with the same id and clock, and compares
// every object and every row: a new ledger must be the ledger an old one
// becomes, down to its first event's hash.
func TestNewLedgerIsAMigratedOne(t *testing.T) {
	sqliteOnly(t)
	defer func(f func() string) { newUUID = f }(newUUID)
	newUUID = func() string { return "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b" }
	dir := t.TempDir()
	dump := func(name string, replay bool) string {
		sqlite.ReplayMigrations = replay
		defer func() { sqlite.ReplayMigrations = false }()
		path := filepath.Join(dir, name)
		s, err := Open(ctx, path, Options{Now: newClock().Now})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var b strings.Builder
		var objects []string
		rows, err := db.Query("SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var typ, name, text string
			rows.Scan(&typ, &name, &text)
			fmt.Fprintf(&b, "%s %s\n%s\n", typ, name, text)
			if typ == "table" {
				objects = append(objects, name)
			}
		}
		rows.Close()
		for _, p := range []string{"user_version", "application_id", "journal_mode", "foreign_keys"} {
			var v string
			db.QueryRow("PRAGMA " + p).Scan(&v)
			fmt.Fprintf(&b, "%s=%s\n", p, v)
		}
		for _, table := range objects {
			rows, err := db.Query(`SELECT * FROM "` + table + `" ORDER BY 1`)
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
				fmt.Fprintf(&b, "%s %q\n", table, v)
			}
			rows.Close()
		}
		return b.String()
	}
	fresh, replayed := dump("fresh.db", false), dump("replayed.db", true)
	if fresh != replayed {
		f, r := strings.Split(fresh, "\n"), strings.Split(replayed, "\n")
		for i := 0; i < len(f) && i < len(r); i++ {
			if f[i] != r[i] {
				t.Fatalf("line %d differs:\nnew:      %.300s\nmigrated: %.300s", i, f[i], r[i])
			}
		}
		t.Fatalf("new ledger %d lines, migrated %d", len(f), len(r))
	}
	if !strings.Contains(fresh, "ledger_meta [") {
		t.Fatalf("the dump has no ledger_meta row:\n%.2000s", fresh)
	}
}

package ledger

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReplaceRefusedOnArchiveAndEvidenceTables: INSERT OR REPLACE,
// REPLACE INTO and an upsert, from a plain connection as a sqlite3 shell
// makes, are refused by a trigger on the tables issue 42 found open
// (archives, pruned_events, set_aside, archived_stubs, through the
// archived_keys view too) and on the chain head, and change nothing.
func TestReplaceRefusedOnArchiveAndEvidenceTables(t *testing.T) {
	sqliteOnly(t)
	s, c, _ := archiveFixture(t)
	if _, err := s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(-time.Hour), To: filepath.Join(t.TempDir(), "a.db"), Operator: "alice"}); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, s.Path())
	// A forged vote set aside by the real one: a set_aside row.
	if _, err := db.Exec("INSERT INTO votes(action_key, decision, operator, name_key, reason, at_ms) VALUES ('pending-1', 'approved', 'alice', 'alice', '', 1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reject(ctx, "pending-1", "alice", "no"); err != nil {
		t.Fatal(err)
	}
	snapshot := func(table string) string {
		rows, err := db.Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			j, _ := json.Marshal(vals)
			out = append(out, string(j))
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	tables := []string{"archives", "pruned_events", "set_aside", "archived_stubs", "chain_head"}
	before := map[string]string{}
	for _, tb := range tables {
		before[tb] = snapshot(tb)
		if before[tb] == "" {
			t.Fatalf("%s has no row to replace", tb)
		}
	}
	var attacks []string
	for _, tb := range []string{"archives", "pruned_events", "set_aside", "archived_stubs", "archived_keys", "chain_head"} {
		attacks = append(attacks,
			"INSERT OR REPLACE INTO "+tb+" SELECT * FROM "+tb,
			"REPLACE INTO "+tb+" SELECT * FROM "+tb)
	}
	attacks = append(attacks,
		"INSERT INTO archives SELECT * FROM archives WHERE true ON CONFLICT DO UPDATE SET file = 'elsewhere.db'",
		"INSERT INTO pruned_events SELECT * FROM pruned_events WHERE true ON CONFLICT DO UPDATE SET archive_id = 99",
		"INSERT INTO set_aside SELECT * FROM set_aside WHERE true ON CONFLICT DO UPDATE SET operator = 'mallory'",
		"INSERT INTO archived_stubs SELECT * FROM archived_stubs WHERE true ON CONFLICT DO UPDATE SET state = 3",
		"INSERT INTO chain_head SELECT * FROM chain_head WHERE true ON CONFLICT DO UPDATE SET seq = 1",
		// The state of an archived key rewritten in place through the view.
		"INSERT OR REPLACE INTO archived_keys(action_key, archive_id, state, result, context_sha256) SELECT action_key, archive_id, 'succeeded', '', context_sha256 FROM archived_keys",
		// Moving the head back to an earlier event.
		"INSERT OR REPLACE INTO chain_head SELECT 1, seq, hash FROM events WHERE seq = 1",
		// A run of removed events replaced through its second unique key.
		"INSERT OR REPLACE INTO pruned_events SELECT first_seq + 1000, last_seq, first_prev, last_hash, archive_id FROM pruned_events",
	)
	for _, q := range attacks {
		_, err := db.Exec(q)
		if err == nil || !strings.Contains(err.Error(), "never replaced") && !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want a trigger's refusal", q, err)
		}
		for _, tb := range tables {
			if got := snapshot(tb); got != before[tb] {
				t.Fatalf("%s changed %s", q, tb)
			}
		}
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep.Problems, err)
	}
}

// TestPostgresUpsertRefusedOnEveryEvidenceTable: PostgreSQL has no
// REPLACE; its upsert (INSERT ... ON CONFLICT DO UPDATE) fires the
// UPDATE triggers, and every evidence table's statement trigger refuses
// it, even from the schema's owner and whether or not a row conflicts.
// Only the projection and the chain head, which are updated by design,
// and the migrations' record are left out; pending events refuse an
// update row by row (an empty table has none to conflict with).
func TestPostgresUpsertRefusedOnEveryEvidenceTable(t *testing.T) {
	if !onPostgres {
		t.Skip("PostgreSQL's triggers: run with TOLLGATE_TEST_BACKEND=postgres")
	}
	s, c, _ := archiveFixture(t)
	if _, err := s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(-time.Hour), To: filepath.Join(t.TempDir(), "a.db"), Operator: "alice"}); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, testPath(s))
	targets, err := queryRawTargets(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) < 25 {
		t.Fatalf("found only %d tables with a key: %v", len(targets), targets)
	}
	for _, tg := range targets {
		switch tg[0] {
		case "action_index", "chain_head", "tollgate_schema":
			continue
		case "pending_events":
			var n int
			if db.QueryRow("SELECT count(*) FROM pending_events").Scan(&n); n == 0 {
				continue
			}
		}
		q := fmt.Sprintf("INSERT INTO %s SELECT * FROM %s ON CONFLICT ON CONSTRAINT %s DO UPDATE SET %s = EXCLUDED.%s", tg[0], tg[0], tg[1], tg[2], tg[2])
		if _, err := db.Exec(q); err == nil || !strings.Contains(err.Error(), "append-only") && !strings.Contains(err.Error(), "only by being sealed") {
			t.Errorf("%s: %v, want the append-only trigger's refusal", q, err)
		}
	}
}

// queryRawTargets lists each table of the ledger's public schema (its
// private one holds no evidence: configuration and coordination) with a
// primary key: its name, the key's constraint and one column
// that is not generated.
func queryRawTargets(db *rawConn) ([][3]string, error) {
	rows, err := db.Query(`SELECT c.relname, k.conname,
		(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum LIMIT 1)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'p'
		WHERE c.relkind = 'r' AND n.nspname = 'public' ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][3]string
	for rows.Next() {
		var r [3]string
		if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

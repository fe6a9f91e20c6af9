package ledger

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/approvals"
)

// BenchmarkFootprintVariants measures what issue 27's other compact-storage
// ideas would pay before anyone changes the schema for them: digests and
// hashes as 32-byte blobs instead of 64 hex digits, states and fact kinds
// as small integers, and permit ids as 16-byte blobs. It builds a ledger
// of 2,040 actions with the real Store (Record, and auto Guard, as
// BenchmarkFootprint does), then replays it into copies whose columns are
// converted by SQL (unhex(), a CASE over the vocabulary), one action per
// transaction in the order they were written: every row of the action in
// every table that has an action key, its events in chain order, and the
// chain head row. Pages per commit are WAL frames over the first 40
// replayed actions, bytes per action the file's growth over the next
// 2,000, checkpointed: BenchmarkFootprint's method, beside the seed's bare
// table measured the same way. The "as-is" variant replays without
// converting anything, so that the replay itself is checked against
// BenchmarkFootprint's figures for the real write path.
//
// What stays text in every variant: the seed's own intents table (its
// shape is the seed fixture's), and the digests inside each event's JSON
// detail and hash inputs (the chain's inputs do not change). Triggers are
// not copied: they cost the schema, not the rows.
func BenchmarkFootprintVariants(b *testing.B) {
	const commits, actions = 40, 2000
	h := pay.Digest()
	sources := []struct {
		name  string
		write func(s *Store, i int) error
	}{
		{"record", func(s *Store, i int) error {
			_, err := s.Record(ctx, fmt.Sprintf("k:%d", i), Payload{"auto", "acct-1", fmt.Sprintf("refund %d EUR", i)}, RecordOptions{Agent: "bench"})
			return err
		}},
		{"guard", func(s *Store, i int) error {
			_, err := s.Guard(ctx, fmt.Sprintf("k:%d", i), Payload{"auto", "acct-1", fmt.Sprintf("refund %d EUR", i)}, GuardOptions{Agent: "bench"})
			return err
		}},
	}
	built := map[string]string{}
	for _, src := range sources {
		path := filepath.Join(b.TempDir(), src.name+"-source.db")
		s, err := Open(ctx, path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "auto", Mode: approvals.Auto}, "root"); err != nil {
			b.Fatal(err)
		}
		if _, err := s.w.Exec("PRAGMA synchronous = OFF"); err != nil { // the source's speed is not measured
			b.Fatal(err)
		}
		for i := 0; i < commits+actions; i++ {
			if err := src.write(s, i); err != nil {
				b.Fatal(err)
			}
		}
		checkpoint(b, s.w)
		s.Close()
		built[src.name] = path
	}
	for n := 0; n < b.N; n++ {
		// The seed's bare table, as BenchmarkFootprint measures it.
		seedPath := filepath.Join(b.TempDir(), "seed.db")
		db := seedWriterAt(b, seedPath)
		before := walFrames(b, seedPath)
		for i := 0; i < commits; i++ {
			if _, err := db.Exec(fixtureInsert, fmt.Sprintf("k:%d", i), h); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(walFrames(b, seedPath)-before)/commits, "seed-pages/commit")
		checkpoint(b, db)
		fi0, _ := os.Stat(seedPath)
		for i := commits; i < commits+actions; i++ {
			if _, err := db.Exec(fixtureInsert, fmt.Sprintf("k:%d", i), h); err != nil {
				b.Fatal(err)
			}
		}
		checkpoint(b, db)
		fi, _ := os.Stat(seedPath)
		seedBytes := float64(fi.Size()-fi0.Size()) / actions
		b.ReportMetric(seedBytes, "seed-bytes/action")
		db.Close()
		for _, src := range sources {
			for _, v := range footprintVariants {
				pages, bytes := replayConverted(b, built[src.name], v, commits, actions)
				name := src.name + "-" + v.name
				b.ReportMetric(pages, name+"-pages/commit")
				b.ReportMetric(bytes, name+"-bytes/action")
				b.ReportMetric(bytes/seedBytes, name+"/seed-bytes")
			}
		}
	}
}

// A footprintVariant says which columns a replay converts.
type footprintVariant struct {
	name                 string
	digests, enums, uuid bool
}

var footprintVariants = []footprintVariant{
	{name: "as-is"},
	{name: "blob-digests", digests: true},
	{name: "blob-digests+int-states", digests: true, enums: true},
	{name: "blob-digests+int-states+blob-permit-ids", digests: true, enums: true, uuid: true},
}

// stageWords is the projection's vocabulary in its CHECK's order; the
// integer variant stores a stage's position in it.
var stageWords = []string{"recorded", "pending", "approved", "denied", "rejected", "executing", "uncertain", "succeeded", "failed", "reconciled"}

// enumColumns are the text columns that hold a state or a fact kind from
// a fixed vocabulary (payloads.kind and action_index.kind are the
// caller's action kinds: free text, not converted).
var enumColumns = map[string][]string{
	"action_index": {"stage"},
	"events":       {"type", "fact_table"},
	"policy_evals": {"mode"},
	"reports":      {"outcome", "kind"},
	"decisions":    {"decision"},
	"votes":        {"decision"},
	"signatures":   {"fact_table"},
}

// isDigestColumn says whether a column holds a SHA-256 in hex. The seed's
// intents table keeps its shape.
func isDigestColumn(table, col string) bool {
	return table != "intents" && (strings.HasSuffix(col, "sha256") || strings.HasSuffix(col, "hash") || col == "first_prev")
}

// replayConverted replays the ledger at src into a new file with v's
// conversions and returns its WAL pages per commit over the first commits
// actions and its bytes per action over the next actions.
func replayConverted(b *testing.B, src string, v footprintVariant, commits, actions int) (pages, bytes float64) {
	b.Helper()
	sdb, err := sql.Open("sqlite", "file:"+src+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	defer sdb.Close()
	type object struct{ kind, name, table, sql string }
	var objects []object
	rows, err := sdb.Query(`SELECT type, name, tbl_name, sql FROM sqlite_schema
		WHERE type IN ('table', 'index') AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.kind, &o.name, &o.table, &o.sql); err != nil {
			b.Fatal(err)
		}
		objects = append(objects, o)
	}
	rows.Close()
	// The vocabulary of every enum column, as the source holds it; the
	// stage's is the schema's.
	vocab := map[string][]string{"action_index.stage": stageWords}
	for t, cols := range enumColumns {
		for _, c := range cols {
			if _, ok := vocab[t+"."+c]; ok {
				continue
			}
			vocab[t+"."+c] = strings1(b, sdb, fmt.Sprintf("SELECT DISTINCT %s FROM %s ORDER BY 1", c, t))
		}
	}
	// The columns each table is written with (a generated column is not),
	// and the expression that converts each.
	type table struct {
		name, cols, exprs string
		keyed             bool // has an action_key: replayed action by action
	}
	var tables []table
	for _, o := range objects {
		if o.kind != "table" {
			continue
		}
		t := table{name: o.table}
		var cols, exprs []string
		cs, err := sdb.Query("SELECT name, hidden FROM pragma_table_xinfo(?)", o.table)
		if err != nil {
			b.Fatal(err)
		}
		for cs.Next() {
			var c string
			var hidden int
			cs.Scan(&c, &hidden)
			if hidden != 0 {
				continue
			}
			e := c
			switch {
			case v.digests && isDigestColumn(o.table, c):
				e = fmt.Sprintf("CASE WHEN length(%s) = 64 THEN unhex(%[1]s) ELSE %[1]s END", c)
			case v.uuid && c == "permit_id":
				e = fmt.Sprintf("CASE WHEN length(%s) = 36 THEN unhex(replace(%[1]s, '-', '')) ELSE %[1]s END", c)
			case v.enums && slices.Contains(enumColumns[o.table], c) && len(vocab[o.table+"."+c]) > 0:
				var sb strings.Builder
				sb.WriteString("CASE " + c)
				for i, w := range vocab[o.table+"."+c] {
					fmt.Fprintf(&sb, " WHEN '%s' THEN %d", strings.ReplaceAll(w, "'", "''"), i+1)
				}
				sb.WriteString(" ELSE " + c + " END")
				e = sb.String()
			}
			if c == "action_key" {
				t.keyed = true
			}
			cols, exprs = append(cols, c), append(exprs, e)
		}
		cs.Close()
		t.cols, t.exprs = strings.Join(cols, ", "), strings.Join(exprs, ", ")
		tables = append(tables, t)
	}
	keys := strings1(b, sdb, "SELECT action_key FROM action_index ORDER BY id")
	if len(keys) < commits+actions {
		b.Fatalf("the source holds %d actions, want %d", len(keys), commits+actions)
	}

	path := filepath.Join(b.TempDir(), "replay.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)&_pragma=ignore_check_constraints(1)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		if _, err := db.Exec(q, args...); err != nil {
			b.Fatalf("%v\n%s", err, q)
		}
	}
	stage := strings.NewReplacer()
	if v.enums {
		var pairs []string
		for i, w := range stageWords {
			pairs = append(pairs, "'"+w+"'", fmt.Sprint(i+1))
		}
		stage = strings.NewReplacer(pairs...)
	}
	for _, o := range objects {
		q := o.sql
		if o.kind == "table" && (v.digests || v.enums || v.uuid) {
			// A STRICT table refuses a blob in a TEXT column; the
			// converted copies declare no types' strictness.
			q = strings.Replace(q, "STRICT, WITHOUT ROWID", "WITHOUT ROWID", 1)
			q = strings.TrimSuffix(strings.TrimSpace(q), "STRICT")
			q = strings.TrimSuffix(strings.TrimSpace(q), ",")
		}
		if o.kind == "index" && o.table == "action_index" {
			q = stage.Replace(q) // the open-work index's terms
		}
		exec(q)
	}
	exec("ATTACH DATABASE ? AS src", src)
	exec("CREATE TEMP TABLE replayed (k TEXT PRIMARY KEY)")
	exec("INSERT INTO replayed SELECT action_key FROM src.action_index")
	// What belongs to no action (the policy, the ledger's identity, the
	// chain head, events with no key) is there before the first action.
	for _, t := range tables {
		where := ""
		if t.keyed {
			where = " WHERE action_key NOT IN (SELECT k FROM replayed)"
		}
		exec(fmt.Sprintf("INSERT INTO main.%[1]s (%[2]s) SELECT %[3]s FROM src.%[1]s%[4]s", t.name, t.cols, t.exprs, where))
	}
	var inserts []string
	for _, t := range tables {
		if !t.keyed {
			continue
		}
		q := fmt.Sprintf("INSERT INTO main.%[1]s (%[2]s) SELECT %[3]s FROM src.%[1]s WHERE action_key = ?1", t.name, t.cols, t.exprs)
		if t.name == "events" {
			q += " ORDER BY seq"
		}
		if t.name == "intents" {
			inserts = slices.Insert(inserts, 0, q) // every fact references its intent
		} else {
			inserts = append(inserts, q)
		}
	}
	inserts = append(inserts, "UPDATE main.chain_head SET (seq, hash) = (SELECT seq, hash FROM main.events ORDER BY seq DESC LIMIT 1)")
	replay := func(k string) {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range inserts {
			if _, err := tx.Exec(q, k); err != nil {
				b.Fatalf("%v\n%s", err, q)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	checkpoint(b, db)
	before := walFrames(b, path)
	for _, k := range keys[:commits] {
		replay(k)
	}
	pages = float64(walFrames(b, path)-before) / float64(commits)
	checkpoint(b, db)
	fi0, _ := os.Stat(path)
	for _, k := range keys[commits : commits+actions] {
		replay(k)
	}
	checkpoint(b, db)
	fi, _ := os.Stat(path)
	// Where the bytes are: each b-tree's pages over all the actions
	// replayed (dbstat), largest first.
	where := strings1(b, db, "SELECT name || ' ' || (sum(pgsize) / ?) FROM dbstat GROUP BY name ORDER BY sum(pgsize) DESC LIMIT 8", commits+actions)
	b.Logf("%s, %s: bytes per action by b-tree: %s", filepath.Base(src), v.name, strings.Join(where, ", "))
	return pages, float64(fi.Size()-fi0.Size()) / float64(actions)
}

// strings1 returns the first column of every row q returns.
func strings1(b *testing.B, db *sql.DB, q string, args ...any) []string {
	b.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			b.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

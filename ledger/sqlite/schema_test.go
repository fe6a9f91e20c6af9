package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/snapshot"
	"github.com/tollgate-dev/tollgate/ledger/engine"
)

var update = flag.Bool("update", false, "write testdata/baseline.sql.gz from the definition files (only while the schema is at the baseline)")

// baselineFile is the frozen snapshot of a new ledger at the baseline:
// what every ledger of the first release holds, which forward migrations
// start from. It is generated (TestBaselineSnapshot -update), never
// edited, and never regenerated once a migration is on top of it.
const baselineFile = "testdata/baseline.sql.gz"

// devLastFile is a ledger the last development build made.
const devLastFile = "../testdata/dev20_ledger.sql.gz"

// emptyFile is an empty file opened as createLedger opens its new file.
func emptyFile(t *testing.T) (*sql.DB, string) {
	path := filepath.Join(t.TempDir(), "l.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := openWriter(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// newLedgerEngine is an engine on a new ledger made from the definition
// files.
func newLedgerEngine(t *testing.T) *Engine {
	db, path := emptyFile(t)
	e := &Engine{path: path, w: db}
	if err := e.create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// loadedEngine is an engine on a file that script made, at version.
func loadedEngine(t *testing.T, script string, version int) *Engine {
	db, path := emptyFile(t)
	// Rows in the order of their tables: a report comes before the
	// permit it refers to.
	if _, err := db.Exec("PRAGMA foreign_keys = OFF;" + script); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA foreign_keys = ON; PRAGMA application_id = %d; PRAGMA user_version = %d", ApplicationID, version)); err != nil {
		t.Fatal(err)
	}
	return &Engine{path: path, w: db}
}

// schemaOf describes everything about db's schema a ledger's behaviour
// depends on: each object's stored definition, each table's columns
// (with hidden and generated ones), each index's columns, each table's
// foreign keys, and the header's version and application id.
func schemaOf(t *testing.T, db *sql.DB) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	var v, app int
	db.QueryRow("SELECT (SELECT user_version FROM pragma_user_version), (SELECT application_id FROM pragma_application_id)").Scan(&v, &app)
	fmt.Fprintf(&b, "user_version %d application_id %d\n", v, app)
	rows, err := db.QueryContext(ctx, "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var typ, name, tbl, text string
		rows.Scan(&typ, &name, &tbl, &text)
		fmt.Fprintf(&b, "%s %s on %s\n%s\n", typ, name, tbl, text)
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	rows.Close()
	for _, tb := range tables {
		for _, q := range []string{
			"SELECT cid || ' ' || name || ' ' || type || ' ' || \"notnull\" || ' ' || coalesce(dflt_value, 'NULL') || ' ' || pk || ' ' || hidden FROM pragma_table_xinfo(?)",
			"SELECT l.name || ' ' || l.\"unique\" || ' ' || l.origin || ' ' || l.partial || ': ' || (SELECT group_concat(coalesce(i.name, '<expr>') || ' ' || i.\"desc\" || ' ' || i.coll, ', ') FROM pragma_index_xinfo(l.name) i) FROM pragma_index_list(?) l ORDER BY l.name",
			"SELECT \"table\" || '(' || coalesce(\"to\", '') || ') from ' || \"from\" || ' ' || on_update || ' ' || on_delete FROM pragma_foreign_key_list(?)",
		} {
			rows, err := db.QueryContext(ctx, q, tb)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				rows.Scan(&s)
				fmt.Fprintf(&b, "%s: %s\n", tb, s)
			}
			rows.Close()
		}
	}
	return b.String()
}

// requireSameSchema fails, naming the first line that differs, unless
// got and want describe the same schema.
func requireSameSchema(t *testing.T, got, want string) {
	t.Helper()
	if d := firstDifference(got, want); d != "" {
		t.Fatal(d)
	}
}

// firstDifference names the first line where got and want differ, or is
// empty when they do not.
func firstDifference(got, want string) string {
	if got == want {
		return ""
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d differs:\nmigrated: %.300s\nnew:      %.300s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("migrated %d lines, new %d", len(g), len(w))
}

// TestBaselineSnapshot: testdata/baseline.sql.gz is what the definition
// files make, for as long as the schema is at the baseline; once a
// migration is on top of it the snapshot is frozen (-update refuses).
func TestBaselineSnapshot(t *testing.T) {
	ctx := context.Background()
	if schemaVersion() != engine.Baseline {
		if *update {
			t.Fatalf("the schema is at %d, past the baseline %d: %s is frozen and never regenerated", schemaVersion(), engine.Baseline, baselineFile)
		}
		t.Skipf("the schema is past the baseline: %s is frozen (TestForwardMigrationsMakeTheSchema uses it)", baselineFile)
	}
	got, err := dumpSchema(ctx, newLedgerEngine(t).w)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := snapshot.Write(baselineFile, got); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := snapshot.Read(baselineFile)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("%s is not what the definition files make at the baseline: go test ./ledger/sqlite -run BaselineSnapshot -update", baselineFile)
	}
}

// TestForwardMigrationsMakeTheSchema: a ledger at the baseline (the
// frozen snapshot) migrated forward, and a ledger the last development
// build made carried to the baseline and forward, each have exactly the
// schema a new ledger has: every table, column, index, view and trigger,
// as stored.
func TestForwardMigrationsMakeTheSchema(t *testing.T) {
	ctx := context.Background()
	fresh := schemaOf(t, newLedgerEngine(t).w)
	for _, from := range []struct {
		file    string
		version int
	}{{baselineFile, engine.Baseline}, {devLastFile, DevLast}} {
		t.Run(filepath.Base(from.file), func(t *testing.T) {
			script, err := snapshot.Read(from.file)
			if err != nil {
				t.Fatal(err)
			}
			e := loadedEngine(t, script, from.version)
			if err := e.migrate(ctx, kindOlder, from.version, nil); err != nil {
				t.Fatal(err)
			}
			requireSameSchema(t, schemaOf(t, e.w), fresh)
		})
	}
	// The comparison catches a definition that differs: a trigger whose
	// body was changed in the files but not by a migration, a column's
	// default, an index.
	for _, change := range []string{
		"DROP TRIGGER events_no_update; CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'no'); END",
		"DROP INDEX events_fact; CREATE INDEX events_fact ON events(fact_table)",
		"ALTER TABLE reports ADD COLUMN extra TEXT NOT NULL DEFAULT ''",
	} {
		t.Run("caught "+strings.Fields(change)[0]+" "+strings.Fields(change)[2], func(t *testing.T) {
			e := newLedgerEngine(t)
			if _, err := e.w.Exec(change); err != nil {
				t.Fatal(err)
			}
			if firstDifference(schemaOf(t, e.w), fresh) == "" {
				t.Fatalf("%q went unnoticed", change)
			}
		})
	}
}

// TestDevelopmentStepRefusesAnotherSchema: a file at version 20 whose
// tables are not the last development schema's (a column more, a check
// changed, a table missing or extra) is refused by name, and stays as it
// was: the step rewrites definitions only where they define the same
// tables.
func TestDevelopmentStepRefusesAnotherSchema(t *testing.T) {
	ctx := context.Background()
	script, err := snapshot.Read(devLastFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, change := range []struct{ sql, table string }{
		{"ALTER TABLE reports ADD COLUMN extra TEXT NOT NULL DEFAULT ''", "reports"},
		{"DROP TABLE permit_attempts", "permit_attempts"},
		{"CREATE TABLE notes (x TEXT)", "notes"},
		{"PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, 'BETWEEN 1 AND 9', 'BETWEEN 1 AND 8') WHERE name = 'policy_rules'; PRAGMA writable_schema = OFF", "policy_rules"},
	} {
		t.Run(change.table, func(t *testing.T) {
			e := loadedEngine(t, script, DevLast)
			if _, err := e.w.Exec(change.sql); err != nil {
				t.Fatal(err)
			}
			before := schemaOf(t, e.w)
			err := e.migrate(ctx, kindOlder, DevLast, nil)
			if !errors.Is(err, engine.ErrDevelopmentSchema) || !strings.Contains(err.Error(), "table "+change.table+" ") {
				t.Fatalf("step of a changed schema: %v", err)
			}
			requireSameSchema(t, schemaOf(t, e.w), before)
		})
	}
}

// TestShape: comments, layout and quoted identifiers do not change a
// statement's shape; anything else, a string literal's content included,
// does.
func TestShape(t *testing.T) {
	base := "CREATE TABLE t (a TEXT NOT NULL DEFAULT '' CHECK(a <> '--x'), b INTEGER)"
	for _, same := range []string{
		"CREATE TABLE \"t\" (\n    -- why a\n    a TEXT NOT NULL DEFAULT ''  CHECK(a <> '--x'),\n    b INTEGER /* why b */\n)",
		"CREATE TABLE t (a TEXT NOT NULL DEFAULT '' CHECK(a <> '--x')\n, b INTEGER)",
	} {
		if shape(same) != shape(base) {
			t.Errorf("%q: shape %q, want %q", same, shape(same), shape(base))
		}
	}
	for _, other := range []string{
		"CREATE TABLE t (a TEXT NOT NULL DEFAULT '' CHECK(a <> '-- x'), b INTEGER)",
		"CREATE TABLE t (a TEXT NOT NULL DEFAULT 'x' CHECK(a <> '--x'), b INTEGER)",
		"CREATE TABLE t (a TEXT NOT NULL DEFAULT '' CHECK(a <> '--x'), b INTEGER, c TEXT)",
		"CREATE TABLE t (b INTEGER, a TEXT NOT NULL DEFAULT '' CHECK(a <> '--x'))",
	} {
		if shape(other) == shape(base) {
			t.Errorf("%q has the shape of %q", other, base)
		}
	}
}

// dumpSchema writes what db holds as baseline.sql.gz is written: tables in
// the order SQLite made them, their rows, then indexes, views and
// triggers (after the rows, so that a trigger refusing writes does not
// refuse them).
func dumpSchema(ctx context.Context, db *sql.DB) (string, error) {
	var b strings.Builder
	b.WriteString("-- A new ledger at the baseline schema, as SQLite stores it: generated\n-- by TestBaselineSnapshot -update, frozen once a migration is on top of it.\n")
	objs, err := objects(ctx, db)
	if err != nil {
		return "", err
	}
	for _, o := range objs {
		if o.typ == "table" {
			b.WriteString(o.sql + ";\n")
		}
	}
	for _, o := range objs {
		if o.typ == "table" {
			if err := dumpRows(ctx, db, &b, o.name); err != nil {
				return "", err
			}
		}
	}
	for _, kind := range []string{"index", "view", "trigger"} {
		for _, o := range objs {
			if o.typ == kind {
				b.WriteString(o.sql + ";\n")
			}
		}
	}
	return b.String(), nil
}

// dumpRows writes table's rows as INSERT statements, each value as
// SQLite's quote() writes it.
func dumpRows(ctx context.Context, db *sql.DB, b *strings.Builder, table string) error {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		return err
	}
	var names, quoted []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return err
		}
		names = append(names, c)
		quoted = append(quoted, `quote("`+c+`")`)
	}
	rows.Close()
	q := `SELECT 'INSERT INTO "` + table + `"(` + strings.Join(names, ", ") + `) VALUES(' || ` + strings.Join(quoted, ` || ',' || `) + ` || ');' FROM "` + table + `" ORDER BY 1`
	rows, err = db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		b.WriteString(s + "\n")
	}
	return rows.Err()
}

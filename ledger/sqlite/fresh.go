package sqlite

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// schema.sql is what the migrations' SQL leaves in an empty file: every
// table, its static rows, then the indexes, views and triggers, as
// SQLite stores them. A new ledger is made from it in one transaction:
// replaying fifteen migrations, each in its own transaction re-reading
// the triggers the one before left, took 85-95 ms (a fifth of it schema
// 12 rebuilding tables that hold nothing), and a new ledger is every
// test's first step and a new operator's first command.
// TestSchemaFileIsTheMigrationsResult rebuilds it from the migrations
// and fails when it differs (go test ./ledger/sqlite -run SchemaFile
// -update rewrites it).
//
//go:embed schema.sql
var schemaFile string

// schemaFileHeader starts schema.sql with the version it was made at:
// a build whose migrations went further replays them instead.
const schemaFileHeader = "-- tollgate schema version "

// freshSchema is schema.sql's version and its SQL.
func freshSchema() (int, string) {
	line, body, _ := strings.Cut(schemaFile, "\n")
	v, err := strconv.Atoi(strings.TrimPrefix(line, schemaFileHeader))
	if !strings.HasPrefix(line, schemaFileHeader) || err != nil {
		return 0, ""
	}
	return v, body
}

// ReplayMigrations makes new ledgers by replaying every migration, as a
// build without schema.sql would: for the test that compares the two.
var ReplayMigrations = false

// create fills a new, empty file: schema.sql and the state machine's
// step for the last version (which identifies the ledger) in one
// transaction, or every migration when schema.sql is not of this build's
// version.
func (e *Engine) create(ctx context.Context, after engine.Migration) error {
	last := schemaVersion()
	v, body := freshSchema()
	if v != last || ReplayMigrations {
		return e.migrate(ctx, 0, after)
	}
	err := e.retry(ctx, func() error {
		tx, err := e.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, body); err != nil {
			return fmt.Errorf("schema.sql: %w", err)
		}
		if after != nil {
			if err := after(ctx, tx, last); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", ApplicationID, last)); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return e.MapError(err)
	}
	return e.walMode(ctx)
}

// dumpSchema writes what db holds as schema.sql does: tables in the
// order SQLite made them, their rows, then indexes, views and triggers
// (after the rows, so that a trigger refusing writes does not refuse
// them).
func dumpSchema(ctx context.Context, db *sql.DB, version int) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%d\n", schemaFileHeader, version)
	objects := func(kind string) ([][2]string, error) {
		rows, err := db.QueryContext(ctx, "SELECT name, sql FROM sqlite_master WHERE type = ? AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid", kind)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out [][2]string
		for rows.Next() {
			var o [2]string
			if err := rows.Scan(&o[0], &o[1]); err != nil {
				return nil, err
			}
			out = append(out, o)
		}
		return out, rows.Err()
	}
	tables, err := objects("table")
	if err != nil {
		return "", err
	}
	for _, t := range tables {
		b.WriteString(t[1] + ";\n")
	}
	for _, t := range append(tables, [2]string{"sqlite_sequence"}) {
		if t[0] == "sqlite_sequence" {
			var n int
			if db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'").Scan(&n); n == 0 {
				continue
			}
		}
		if err := dumpRows(ctx, db, &b, t[0]); err != nil {
			return "", err
		}
	}
	for _, kind := range []string{"index", "view", "trigger"} {
		os, err := objects(kind)
		if err != nil {
			return "", err
		}
		for _, o := range os {
			b.WriteString(o[1] + ";\n")
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
	var quoted []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return err
		}
		quoted = append(quoted, `quote("`+c+`")`)
	}
	rows.Close()
	q := `SELECT 'INSERT INTO "` + table + `" VALUES(' || ` + strings.Join(quoted, ` || ',' || `) + ` || ');' FROM "` + table + `" ORDER BY 1`
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

package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// The schema is defined once, in files organised by what they define:
// schema/tables.sql (tables, their indexes and views) and
// schema/triggers.sql (the append-only and fact-check triggers). A new
// ledger is made from them, in that order, in one transaction.
//
//go:embed schema/*.sql
var schemaFS embed.FS

// schemaFiles are the definition files in the order they run.
var schemaFiles = []string{"schema/tables.sql", "schema/triggers.sql"}

// Migrations above the baseline, NNNN_what.sql (migrations/README.md).
//
//go:embed migrations
var migrationFS embed.FS

// DevLast is the last development schema (before the first release): a
// ledger at it is carried to the baseline by fromDevelopment. Any other
// schema below engine.Baseline is refused.
const DevLast = 20

// identified is the development schema from which a ledger carried its
// application id: one made before it is known by its tables.
const identified = 5

// schemaSQL is the definition files' SQL, in order.
func schemaSQL() (string, error) {
	var b strings.Builder
	for _, f := range schemaFiles {
		s, err := fs.ReadFile(schemaFS, f)
		if err != nil {
			return "", err
		}
		b.Write(s)
		b.WriteString("\n")
	}
	return b.String(), nil
}

func migrations() ([]engine.Step, error) { return engine.Steps(migrationFS, "migrations") }

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return schemaVersion() }

// schemaVersion is the version this build writes, read once from the
// migrations' names alone: every open asks for it, and reading the
// migrations themselves would copy their SQL at the start of each guard
// process.
var schemaVersion = sync.OnceValue(func() int {
	ents, _ := fs.ReadDir(migrationFS, "migrations")
	last := engine.Baseline
	for _, ent := range ents {
		n, _, _ := strings.Cut(ent.Name(), "_")
		if v, err := strconv.Atoi(n); err == nil && strings.HasSuffix(ent.Name(), ".sql") {
			last = max(last, v)
		}
	}
	return last
})

// developmentRefusal is the error for a ledger at a development schema
// this build does not carry forward, saying what to do with it.
func developmentRefusal(path string, version int) error {
	return fmt.Errorf("%w: ledger %s has schema version %d; this build carries forward only the last development schema (%d) and the released ones (%d and later): "+
		"open it once with a tollgate build of schema %d, which migrates it there, and then with this one, or read what it holds with that build's 'tollgate export'",
		engine.ErrDevelopmentSchema, path, version, DevLast, engine.Baseline, DevLast)
}

// create fills a new, empty file (or one that holds only the seed
// fixture's intents table) with the current schema and the state
// machine's step (which identifies the ledger), in one transaction.
func (e *Engine) create(ctx context.Context, after engine.Migration) error {
	body, err := schemaSQL()
	if err != nil {
		return err
	}
	v := schemaVersion()
	err = e.retry(ctx, func() error {
		tx, err := e.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, body); err != nil {
			return fmt.Errorf("schema: %w", err)
		}
		if after != nil {
			if err := after(ctx, tx, v); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", ApplicationID, v)); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return e.MapError(err)
	}
	return e.walMode(ctx)
}

// object is one schema object as sqlite_schema holds it.
type object struct{ typ, name, sql string }

// objects are the schema objects db holds (SQLite's own left out), in
// the order they were made.
func objects(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]object, error) {
	rows, err := q.QueryContext(ctx, "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.typ, &o.name, &o.sql); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// freshObjects are the objects the definition files make, read from a
// scratch database in memory.
func freshObjects(ctx context.Context) ([]object, error) {
	body, err := schemaSQL()
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:fresh?mode=memory")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, body); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return objects(ctx, db)
}

// fromDevelopment carries a ledger at DevLast to the baseline in one
// immediate transaction, keeping every row: its tables already have the
// baseline's columns, keys and checks, so only definitions are replaced,
// so that they read exactly as a new ledger's. Each table's stored
// statement is first proven to define the same table as the baseline's
// (shape: the same text once comments and layout are set aside), and
// then replaced by it (the text SQLite keeps; the file's bytes are not
// touched otherwise); every index, view and trigger is dropped and made
// again from the definition files. A table that differs, or one too
// many or too few, refuses the step and leaves the file as it was.
func (e *Engine) fromDevelopment(ctx context.Context) error {
	want, err := freshObjects(ctx)
	if err != nil {
		return err
	}
	return e.retry(ctx, func() error {
		tx, err := e.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return err
		}
		if v != DevLast {
			return nil // another process carried it first
		}
		have, err := objects(ctx, tx)
		if err != nil {
			return err
		}
		if err := sameTables(have, want); err != nil {
			return err
		}
		for _, kind := range []string{"trigger", "view", "index"} {
			for _, o := range have {
				if o.typ == kind {
					if _, err := tx.ExecContext(ctx, "DROP "+strings.ToUpper(kind)+" IF EXISTS "+quoteName(o.name)); err != nil {
						return fmt.Errorf("drop %s %s: %w", kind, o.name, err)
					}
				}
			}
		}
		if _, err := tx.ExecContext(ctx, "PRAGMA writable_schema = ON"); err != nil {
			return err
		}
		for _, o := range want {
			if o.typ == "table" {
				if _, err := tx.ExecContext(ctx, "UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?", o.sql, o.name); err != nil {
					return err
				}
			}
		}
		var cookie int
		if err := tx.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&cookie); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA schema_version = %d; PRAGMA writable_schema = OFF", cookie+1)); err != nil {
			return err
		}
		for _, o := range want {
			if o.typ != "table" {
				if _, err := tx.ExecContext(ctx, o.sql); err != nil {
					return fmt.Errorf("%s %s: %w", o.typ, o.name, err)
				}
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", engine.Baseline)); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// sameTables refuses have unless its tables are want's, each of the same
// shape.
func sameTables(have, want []object) error {
	tables := map[string]string{}
	for _, o := range have {
		if o.typ == "table" {
			tables[o.name] = o.sql
		}
	}
	for _, o := range want {
		if o.typ != "table" {
			continue
		}
		got, ok := tables[o.name]
		if !ok {
			return fmt.Errorf("%w: table %s is missing: this is not the last development schema (%d)", engine.ErrDevelopmentSchema, o.name, DevLast)
		}
		if shape(got) != shape(o.sql) {
			return fmt.Errorf("%w: table %s is not the one the last development schema (%d) defines; the file was left as it was", engine.ErrDevelopmentSchema, o.name, DevLast)
		}
		delete(tables, o.name)
	}
	for name := range tables {
		return fmt.Errorf("%w: table %s is not part of the last development schema (%d); the file was left as it was", engine.ErrDevelopmentSchema, name, DevLast)
	}
	return nil
}

// shape is a CREATE statement without its comments, its layout and the
// quotes around identifiers: two statements of one shape define the same
// object. String literals are kept as written.
func shape(stmt string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		switch {
		case c == '-' && i+1 < len(stmt) && stmt[i+1] == '-':
			for i < len(stmt) && stmt[i] != '\n' {
				i++
			}
			space = true
		case c == '/' && i+1 < len(stmt) && stmt[i+1] == '*':
			end := strings.Index(stmt[i+2:], "*/")
			if end < 0 {
				i = len(stmt)
			} else {
				i += end + 3
			}
			space = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
		case c == '\'':
			end := i + 1
			for end < len(stmt) && (stmt[end] != '\'' || (end+1 < len(stmt) && stmt[end+1] == '\'')) {
				if stmt[end] == '\'' {
					end++
				}
				end++
			}
			writeToken(&b, stmt[i:min(end+1, len(stmt))], &space)
			i = end
		case c == '"':
			continue
		default:
			writeToken(&b, string(c), &space)
		}
	}
	return b.String()
}

// writeToken appends tok to b, after one space if layout came before it
// and neither side is punctuation.
func writeToken(b *strings.Builder, tok string, space *bool) {
	if *space && b.Len() > 0 && !strings.ContainsRune("(),;", rune(tok[0])) && !strings.HasSuffix(b.String(), "(") && !strings.HasSuffix(b.String(), ",") {
		b.WriteByte(' ')
	}
	*space = false
	b.WriteString(tok)
}

// quoteName quotes an identifier for SQLite.
func quoteName(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

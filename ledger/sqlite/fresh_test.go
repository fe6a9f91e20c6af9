package sqlite

import (
	"context"
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite schema.sql from the migrations")

// TestSchemaFileIsTheMigrationsResult replays every migration's SQL into
// an empty file and dumps it as schema.sql is written: a migration added
// or changed without rewriting schema.sql fails here (and new ledgers
// would replay the migrations, slowly, since its version is behind).
func TestSchemaFileIsTheMigrationsResult(t *testing.T) {
	ctx := context.Background()
	db, path := emptyFile(t)
	e := &Engine{path: path, w: db}
	if err := e.migrate(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	got, err := dumpSchema(ctx, db, schemaVersion())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("schema.sql", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != schemaFile {
		t.Fatalf("schema.sql is not what migrations 1-%d leave (%d bytes against %d): go test ./ledger/sqlite -run SchemaFile -update", schemaVersion(), len(schemaFile), len(got))
	}
	// And a file made from it dumps the same.
	db2, path2 := emptyFile(t)
	if err := (&Engine{path: path2, w: db2}).create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if again, err := dumpSchema(ctx, db2, schemaVersion()); err != nil || again != got {
		t.Fatalf("a ledger made from schema.sql dumps differently (%v)", err)
	}
}

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

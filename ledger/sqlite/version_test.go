package sqlite

import "testing"

// TestSchemaVersionIsTheLastMigration: the version read from the
// migrations' names is the one the migrations themselves end at.
func TestSchemaVersionIsTheLastMigration(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := schemaVersion(), ms[len(ms)-1].Version; got != want || SchemaVersion() != want {
		t.Fatalf("schemaVersion %d, SchemaVersion %d, the last migration %d", got, SchemaVersion(), want)
	}
}

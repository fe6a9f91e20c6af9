package sqlite

import (
	"testing"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// TestSchemaVersionIsTheLastMigration: the version read from the
// migrations' names is the one the migrations themselves end at (the
// baseline while there is none), and every migration is numbered above
// the baseline.
func TestSchemaVersionIsTheLastMigration(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := schemaVersion(), engine.Current(ms); got != want || SchemaVersion() != want || want < engine.Baseline {
		t.Fatalf("schemaVersion %d, SchemaVersion %d, the migrations end at %d", got, SchemaVersion(), want)
	}
	for _, m := range ms {
		if m.Version <= engine.Baseline {
			t.Errorf("migration %s is numbered at or below the baseline %d", m.Name, engine.Baseline)
		}
	}
}

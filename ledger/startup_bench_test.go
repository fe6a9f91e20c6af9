package ledger

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger/sqlite"
)

// BenchmarkTriggerCost measures what the schema's append-only triggers
// cost a new process (issue 27 asks for "fewer triggers to parse at
// start-up"): SQLite parses every trigger of the schema when a connection
// first reads it, and compiles the ones a statement fires into it. Each
// iteration, interleaved on copies of one ledger: a new connection's first
// statement (the schema parsed), and a one-shot open, Guard of a new key
// and close (what a `tollgate guard` process does in the ledger), on the
// ledger as it is and on a copy keeping only the trigger the write path
// needs (intents_index, which makes the projection's row); the seed's bare
// table is the floor of the first. Medians. Nothing here removes a
// trigger from a ledger: the triggers are the protection the tamper tests
// check.
func BenchmarkTriggerCost(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "source.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Auto}, "root"); err != nil {
		b.Fatal(err)
	}
	// Two copies made the same way, so that only the triggers differ.
	full, bare := filepath.Join(dir, "full.db"), filepath.Join(dir, "bare.db")
	for _, p := range []string{full, bare} {
		if _, err := s.Backup(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	raw, err := sql.Open("sqlite", sqlite.WriterDSN(bare))
	if err != nil {
		b.Fatal(err)
	}
	var triggers int
	raw.QueryRow("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'").Scan(&triggers)
	for _, n := range strings1(b, raw, "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name != 'intents_index'") {
		if _, err := raw.Exec("DROP TRIGGER " + n); err != nil {
			b.Fatal(err)
		}
	}
	raw.Close()
	seed := filepath.Join(dir, "seed.db")
	seedWriterAt(b, seed).Close()

	// load opens a connection with the writer's settings and runs its
	// first statement, which reads and parses the schema.
	load := func(path string) time.Duration {
		start := time.Now()
		db, err := sql.Open("sqlite", sqlite.WriterDSN(path))
		if err != nil {
			b.Fatal(err)
		}
		var n int
		if err := db.QueryRow("SELECT count(*) FROM intents WHERE 0").Scan(&n); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		db.Close()
		return d
	}
	oneShot := func(path string, i int) time.Duration {
		start := time.Now()
		openGuardClose(b, path, fmt.Sprintf("k:%d", i))
		return time.Since(start)
	}
	var loadFull, loadBare, loadSeed, guardFull, guardBare []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		loadFull = append(loadFull, load(full))
		loadBare = append(loadBare, load(bare))
		loadSeed = append(loadSeed, load(seed))
		guardFull = append(guardFull, oneShot(full, i))
		guardBare = append(guardBare, oneShot(bare, i))
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds()) / 1e3
	}
	lf, lb, gf, gb := med(loadFull), med(loadBare), med(guardFull), med(guardBare)
	b.ReportMetric(float64(triggers), "triggers")
	b.ReportMetric(lf, "schema-load-µs")
	b.ReportMetric(lb, "schema-load-one-trigger-µs")
	b.ReportMetric(med(loadSeed), "schema-load-seed-µs")
	b.ReportMetric(gf, "open-guard-close-µs")
	b.ReportMetric(gb, "open-guard-close-one-trigger-µs")
	b.ReportMetric(lf-lb, "triggers-parse-µs")
	b.ReportMetric(gf-gb, "triggers-per-guard-process-µs")
}

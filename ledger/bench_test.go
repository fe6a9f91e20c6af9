package ledger

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tollgate-dev/tollgate/approvals"
)

// The raw baselines use the same file, pragmas and one-connection
// immediate-transaction writer as the Store, so the ratios measure
// tollgate's own work, not the disk.

func rawWriter(b *testing.B) *sql.DB {
	path := filepath.Join(b.TempDir(), "raw.db")
	s, err := Open(ctx, path, Options{}) // same schema and file setup
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", dsn(path, 5e9, true))
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkRawInsert is the physical limit: the seed's bare INSERT ... ON
// CONFLICT DO NOTHING, one transaction per row.
func BenchmarkRawInsert(b *testing.B) {
	db := rawWriter(b)
	h := pay.Digest()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(fixtureInsert, fmt.Sprintf("raw:%d", i), h); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawSelect is the retry baseline: a bare primary-key SELECT,
// prepared once, on the reader pool.
func BenchmarkRawSelect(b *testing.B) {
	s, _ := openTest(b)
	s.Record(ctx, "k", pay, RecordOptions{})
	st, err := s.r.Prepare("SELECT payload_sha256 FROM intents WHERE action_key = ?")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var h string
		if err := st.QueryRow("k").Scan(&h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordNew(b *testing.B) {
	s, _ := openTest(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Record(ctx, fmt.Sprintf("rec:%d", i), pay, RecordOptions{Agent: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordRetry(b *testing.B) {
	s, _ := openTest(b)
	s.Record(ctx, "k", pay, RecordOptions{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r, err := s.Record(ctx, "k", pay, RecordOptions{}); err != nil || !r.Replayed {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuardAuto(b *testing.B) {
	s, _ := openTest(b)
	s.SetPolicy(ctx, "*", approvals.Auto, 0, "root")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if a, err := s.Guard(ctx, fmt.Sprintf("g:%d", i), pay, GuardOptions{Agent: "bench"}); err != nil || a.Verdict != Permitted {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuardReplay(b *testing.B) {
	s, _ := openTest(b)
	s.SetPolicy(ctx, "*", approvals.Auto, 0, "root")
	s.Guard(ctx, "k", pay, GuardOptions{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if a, err := s.Guard(ctx, "k", pay, GuardOptions{}); err != nil || a.Verdict != RetryLater {
			b.Fatal(a, err)
		}
	}
}

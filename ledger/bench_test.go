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
	db, err := sql.Open("sqlite", sqlite.WriterDSN(path))
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
	s.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Auto}, "root")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if a, err := s.Guard(ctx, fmt.Sprintf("g:%d", i), pay, GuardOptions{Agent: "bench"}); err != nil || a.Verdict != Permitted {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuardReplay(b *testing.B) {
	s, _ := openTest(b)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Auto}, "root")
	s.Guard(ctx, "k", pay, GuardOptions{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if a, err := s.Guard(ctx, "k", pay, GuardOptions{}); err != nil || a.Verdict != RetryLater {
			b.Fatal(a, err)
		}
	}
}

// BenchmarkRatios interleaves each operation with its baseline, iteration
// by iteration, so that both see the same disk: fsync latency here drifts
// by a factor of two between runs minutes apart, which would make ratios
// of separate benchmarks meaningless. It reports the medians and
// throughput ratios (baseline time / operation time).
func BenchmarkRatios(b *testing.B) {
	raw := rawWriter(b)
	s, _ := openTest(b)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "auto", Mode: approvals.Auto}, "root")
	s.Record(ctx, "k", pay, RecordOptions{})
	sel, err := s.r.Prepare("SELECT payload_sha256 FROM intents WHERE action_key = ?")
	if err != nil {
		b.Fatal(err)
	}
	defer sel.Close()
	h := pay.Digest()
	var tRaw, tNew, tGuard, tSel, tRetry []time.Duration
	timeIt := func(dst *[]time.Duration, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*dst = append(*dst, time.Since(start))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		timeIt(&tRaw, func() error {
			tx, err := raw.Begin()
			if err != nil {
				return err
			}
			if _, err := tx.Exec(fixtureInsert, fmt.Sprintf("raw:%d", i), h); err != nil {
				return err
			}
			return tx.Commit()
		})
		timeIt(&tNew, func() error {
			_, err := s.Record(ctx, fmt.Sprintf("rec:%d", i), pay, RecordOptions{Agent: "bench"})
			return err
		})
		timeIt(&tGuard, func() error {
			_, err := s.Guard(ctx, fmt.Sprintf("g:%d", i), Payload{"auto", "t", "b"}, GuardOptions{Agent: "bench"})
			return err
		})
		for j := 0; j < 20; j++ {
			timeIt(&tSel, func() error { var x string; return sel.QueryRow("k").Scan(&x) })
			timeIt(&tRetry, func() error { _, err := s.Record(ctx, "k", pay, RecordOptions{}); return err })
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds()) / 1000
	}
	raw_, new_, guard, sel_, retry := med(tRaw), med(tNew), med(tGuard), med(tSel), med(tRetry)
	b.ReportMetric(raw_, "raw-insert-us")
	b.ReportMetric(new_, "record-new-us")
	b.ReportMetric(guard, "guard-auto-us")
	b.ReportMetric(sel_, "raw-select-us")
	b.ReportMetric(retry, "record-retry-us")
	b.ReportMetric(raw_/new_, "new/raw")
	b.ReportMetric(raw_/guard, "guard/raw")
	b.ReportMetric(sel_/retry, "retry/select")
	// The goals of the ledger core: a run below them fails. Go first runs
	// every benchmark once with b.N = 1, whose medians say little.
	if b.N < 100 {
		return
	}
	if raw_/new_ < 0.6 {
		b.Errorf("Record of a new key runs at %.2f of the raw insert; the goal is at least 0.6", raw_/new_)
	}
	if sel_/retry < 0.9 {
		b.Errorf("an identical Record retry runs at %.2f of a bare primary-key SELECT; the goal is at least 0.9", sel_/retry)
	}
}

package ledger

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// BenchmarkArchive measures retention's two goals (issue 27): after
// archiving 90% of a ledger of settled actions and VACUUM, the live file
// is at most 15% of its size before; and an identical retry of an
// archived key is within 2x of a retry of a live settled key, timed in
// pairs, interleaved. TOLLGATE_ARCHIVE_BENCH_N sets the ledger's size
// (default 10,000 actions; the figure is for 1,000,000).
// TOLLGATE_ARCHIVE_BENCH_PAIRS times that many retry pairs whatever b.N,
// so that -benchtime 1x builds a large ledger once and still measures
// the retries (ns/op then means nothing; the metrics do).
func BenchmarkArchive(b *testing.B) {
	sqliteOnly(b)
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("TOLLGATE_ARCHIVE_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	path := filepath.Join(b.TempDir(), "ledger.db")
	c := newClock()
	s, err := Open(ctx, path, Options{Now: c.Now})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { s.Close() }()
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Auto}, "root"); err != nil {
		b.Fatal(err)
	}
	// Realistic actions: guarded, permitted and reported, in batches of
	// one transaction each. The last tenth settles a day later.
	payload := func(i int) Payload {
		return Payload{"refund", fmt.Sprintf("customer-%d", i), fmt.Sprintf(`{"amount":"%d.00","currency":"EUR","reason":"duplicate charge"}`, i%5000)}
	}
	key := func(i int) string { return fmt.Sprintf("refund:order-%07d", i) }
	g := s.grantInputs()
	for lo := 0; lo < n; lo += 500 {
		if lo == n*9/10/500*500 {
			c.Add(48 * time.Hour)
		}
		err := s.write(ctx, func(tx *Tx) error {
			for i := lo; i < min(lo+500, n); i++ {
				k, _ := ParseKey(key(i))
				p := payload(i)
				in, _, _, err := recordTx(ctx, tx, k, p, p.Digest(), RecordOptions{Agent: "bot-1"}, tx.now)
				if err != nil {
					return err
				}
				a, _, err := guardTx(ctx, tx, k, in, GuardOptions{Agent: "bot-1", Lease: DefaultLease}, g, tx.now)
				if err != nil {
					return err
				}
				if _, err := reportTx(ctx, tx, key(i), a.PermitID, Succeeded, ReportOptions{Ref: "prov-" + strconv.Itoa(i)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	size := func() int64 {
		s.Close()
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("VACUUM"); err != nil {
			b.Fatal(err)
		}
		db.Close()
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		if s, err = Open(ctx, path, Options{Now: c.Now}); err != nil {
			b.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	t0 := time.Now()
	res, err := s.Archive(ctx, ArchiveOptions{SettledBefore: c.Now().Add(-24 * time.Hour), To: filepath.Join(b.TempDir(), "archive.db"), Operator: "ops"})
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(t0)
	if res.Keys != n*9/10/500*500 {
		b.Fatalf("archived %d keys of %d", res.Keys, n)
	}
	after := size()
	if os.Getenv("TOLLGATE_ARCHIVE_BENCH_KEEP") != "" {
		exec.Command("cp", path, os.Getenv("TOLLGATE_ARCHIVE_BENCH_KEEP")).Run()
	}

	var live, archived []float64
	var pairs []float64
	pairCount := b.N
	if v, err := strconv.Atoi(os.Getenv("TOLLGATE_ARCHIVE_BENCH_PAIRS")); err == nil && v > 0 {
		pairCount = v
	}
	b.ResetTimer()
	for i := 0; i < pairCount; i++ {
		lk, ak := n-1-i%(n/10), i%(n*9/10/500*500)
		t0 := time.Now()
		a1, err1 := s.Guard(ctx, key(lk), payload(lk), GuardOptions{Agent: "bot-1"})
		t1 := time.Now()
		a2, err2 := s.Guard(ctx, key(ak), payload(ak), GuardOptions{Agent: "bot-1"})
		t2 := time.Now()
		if err1 != nil || err2 != nil || a1.State != StateSucceeded || a2.State != StateSucceeded || !a2.Replayed {
			b.Fatalf("retries: %v %v %+v %+v", err1, err2, a1, a2)
		}
		l, a := float64(t1.Sub(t0).Nanoseconds()), float64(t2.Sub(t1).Nanoseconds())
		live, archived, pairs = append(live, l), append(archived, a), append(pairs, a/l)
	}
	b.StopTimer()
	b.ReportMetric(float64(after)/float64(before), "live/before-size")
	b.ReportMetric(float64(before)/float64(n), "bytes/action-before")
	b.ReportMetric(took.Seconds(), "archive-s")
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(med(live)/1000, "live-retry-us")
	b.ReportMetric(med(archived)/1000, "archived-retry-us")
	ratio := med(pairs)
	b.ReportMetric(ratio, "archived/live-retry")
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		b.Fatalf("verify after archive: %v %+v", err, rep.Problems)
	}
	if b.N < 100 {
		return
	}
	// The goal is 0.15; measured 0.147 at 1,000,000 actions of ~3.1 KB,
	// 0.148 at 100,000 and 0.156 at 10,000, where the schema's one-page tables weigh half a
	// percent. The floor is what each archived key keeps (its seed intents
	// row and index entry, about 130 B, and its stub, about 30 B from
	// schema 16). This gate, at the default size, catches a regression;
	// README's retention section gives the figures.
	if r := float64(after) / float64(before); r > 0.17 {
		b.Errorf("after archiving 90%% and VACUUM the live file is %.3f of its size before; it was 0.156 at this size (goal 0.15, met at 100,000)", r)
	}
	if ratio > 2 {
		b.Errorf("a retry of an archived key takes %.2fx a retry of a live one (median of paired ratios); the goal is at most 2", ratio)
	}
}

package ledger

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkPostgresStatus measures issue 25's status in one round trip:
// an agent's status of a settled key (permitted, then reported
// succeeded), timed in the same iteration as a primary-key SELECT of the
// seed's bare table through pgx and as the read of every table in one
// transaction that status made before (fullStatus), interleaved, over
// keys spread through a ledger of settled actions; medians of each and
// of the paired ratios. It fails when the one statement is not faster
// than the transaction it replaced.
func BenchmarkPostgresStatus(b *testing.B) {
	agent, sel, _ := settledLedger(b, "status body %d")
	var tSel, tFull, tOne []time.Duration
	var rOne, rFull []float64
	b.ResetTimer()
	for n := range b.N {
		_, key, digest, t0 := selectSettled(b, sel, n)
		t1 := time.Now()
		full, err := fullStatus(agent, key)
		t2 := time.Now()
		if err != nil || full.State != StateSucceeded || full.SHA256 != digest {
			b.Fatalf("full read of %s: %+v %v", key, full, err)
		}
		d, err := agent.Status(ctx, key)
		t3 := time.Now()
		if err != nil || d.State != StateSucceeded || d.SHA256 != digest || len(d.Events) != len(full.Events) {
			b.Fatalf("status of %s: %+v %v", key, d, err)
		}
		tSel, tFull, tOne = append(tSel, t1.Sub(t0)), append(tFull, t2.Sub(t1)), append(tOne, t3.Sub(t2))
		rOne, rFull = append(rOne, float64(t3.Sub(t2))/float64(t1.Sub(t0))), append(rFull, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
	}
	b.StopTimer()
	med := func(s []time.Duration) time.Duration { slices.Sort(s); return s[len(s)/2] }
	medf := func(s []float64) float64 { slices.Sort(s); return s[len(s)/2] }
	one, full := med(tOne), med(tFull)
	b.ReportMetric(float64(med(tSel).Microseconds()), "select-us")
	b.ReportMetric(float64(full.Microseconds()), "full-read-us")
	b.ReportMetric(float64(one.Microseconds()), "status-us")
	b.ReportMetric(medf(rFull), "full-read/select-paired")
	b.ReportMetric(medf(rOne), "status/select-paired")
	if b.N >= 100 && one >= full {
		b.Errorf("status takes %v (median), the read transaction it replaced %v", one, full)
	}
}

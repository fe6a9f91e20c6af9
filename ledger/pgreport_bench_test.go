package ledger

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// BenchmarkPostgresReport measures issue 25's report in one call
// (schema 19, tollgate_report) against the client's key transaction it
// replaces (seven round trips), one agent's role, each iteration
// reporting one key of each, interleaved, the keys permitted beforehand
// outside the timer; medians of each and of the paired ratios. It fails
// when the one call is not faster than the transaction.
func BenchmarkPostgresReport(b *testing.B) {
	owner := pgtest.DB(b)
	admin := openBench(b, owner)
	if _, err := admin.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Auto}, "root"); err != nil {
		b.Fatal(err)
	}
	agentURL := pgtest.Role(b, owner, "bot", "tollgate_agent")
	server, client := openBench(b, agentURL), openBench(b, agentURL)
	client.noEngineClock.Store(true) // takes the client's path
	permits := make([][2]string, b.N)
	for n := range b.N {
		for i, s := range []*Store{server, client} {
			key := fmt.Sprintf("run:report-%d-%d", i, n)
			a, err := s.Guard(ctx, key, Payload{"run", "t", key}, GuardOptions{Agent: "bot"})
			if err != nil || a.Verdict != Permitted {
				b.Fatalf("%s: %+v %v", key, a.Verdict, err)
			}
			permits[n][i] = a.PermitID
		}
	}
	b.ResetTimer()
	one, tx := pairedCalls(b, func(i, n int) error {
		r, err := []*Store{server, client}[i].Report(ctx, fmt.Sprintf("run:report-%d-%d", i, n), permits[n][i], Succeeded, ReportOptions{Ref: "prov", Latency: time.Millisecond})
		if err == nil && (r.State != StateSucceeded || r.Replayed) {
			err = fmt.Errorf("answered %+v", r)
		}
		return err
	})
	if b.N >= 100 && one >= tx {
		b.Errorf("a report in one call takes %v (median), the key transaction it replaced %v", one, tx)
	}
}

// pairedCalls times b.N pairs of calls, interleaved: call(0, n) the one
// call's, call(1, n) the key transaction's. It reports the medians of
// each and of the paired ratios, and returns the two medians.
func pairedCalls(b *testing.B, call func(i, n int) error) (one, tx time.Duration) {
	var tOne, tTx []time.Duration
	var ratio []float64
	for n := range b.N {
		var took [2]time.Duration
		for i := range 2 {
			t0 := time.Now()
			err := call(i, n)
			took[i] = time.Since(t0)
			if err != nil {
				b.Fatalf("call %d/%d: %v", i, n, err)
			}
		}
		tOne, tTx = append(tOne, took[0]), append(tTx, took[1])
		ratio = append(ratio, float64(took[0])/float64(took[1]))
	}
	b.StopTimer()
	med := func(s []time.Duration) time.Duration { slices.Sort(s); return s[len(s)/2] }
	slices.Sort(ratio)
	one, tx = med(tOne), med(tTx)
	b.ReportMetric(float64(one.Microseconds()), "one-call-us")
	b.ReportMetric(float64(tx.Microseconds()), "key-tx-us")
	b.ReportMetric(ratio[len(ratio)/2], "one-call/key-tx-paired")
	return one, tx
}

// BenchmarkPostgresRecord measures the record in one call (schema 24,
// tollgate_record) against the client's key transaction it replaces
// (nine round trips), one agent's role, each iteration recording one new
// key of each, interleaved; medians of each and of the paired ratios. It
// fails when the one call is not faster than the transaction.
func BenchmarkPostgresRecord(b *testing.B) {
	owner := pgtest.DB(b)
	openBench(b, owner)
	agentURL := pgtest.Role(b, owner, "bot", "tollgate_agent")
	server, client := openBench(b, agentURL), openBench(b, agentURL)
	client.noEngineClock.Store(true) // takes the client's path
	b.ResetTimer()
	one, tx := pairedCalls(b, func(i, n int) error {
		key := fmt.Sprintf("run:record-%d-%d", i, n)
		in, err := []*Store{server, client}[i].Record(ctx, key, Payload{"run", "t", key}, RecordOptions{Agent: "bot"})
		if err == nil && !in.Created {
			err = fmt.Errorf("answered %+v", in)
		}
		return err
	})
	if b.N >= 100 && one >= tx {
		b.Errorf("a record in one call takes %v (median), the key transaction it replaced %v", one, tx)
	}
}

package ledger

import (
	"database/sql"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// BenchmarkNotifyLatency measures, on PostgreSQL, how long after another
// connection's write is acknowledged a Store.Watch reports it (Changed
// returns true): what the console waits for before it re-reads. The
// writer is a store of its own (its own pool, as another process's);
// each write is a new key's approval request, the console's commonest
// wake-up. "poll" asks Changed every millisecond, which is the LISTEN
// connection's own delay; "console" asks at the console's refresh (ui's
// default Refresh, 100 ms), which is what an operator sees. Both report
// the median and the 99th percentile in ms and fail above a 100 ms
// median (issue 26) once there are 20 samples.
func BenchmarkNotifyLatency(b *testing.B) {
	for _, c := range []struct {
		name  string
		every time.Duration
	}{{"poll", time.Millisecond}, {"console", 100 * time.Millisecond}} {
		b.Run(c.name, func(b *testing.B) { notifyLatency(b, c.every) })
	}
}

func notifyLatency(b *testing.B, every time.Duration) {
	u := pgtest.DB(b)
	w, err := Open(ctx, u, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	r, err := Open(ctx, u, Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	watch, err := r.Watch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer watch.Close()
	// The watch listens once its probe came back; until then it polls,
	// which would be measured instead. Drain what it has seen so far.
	drain := func() {
		for {
			ch, err := watch.Changed(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if !ch {
				return
			}
		}
	}
	w.Guard(ctx, "refund:warm", Payload{"refund", "acct", "0"}, GuardOptions{Agent: "bot"})
	time.Sleep(300 * time.Millisecond)
	drain()
	// What is measured is LISTEN's wake-up, not the fallback poll (which
	// a 1 ms poll would make as fast): a session of this database waits
	// in LISTEN. Behind a pooler the watch polls, and says so.
	admin, err := sql.Open("pgx", pgtest.Admin(b))
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	var listening int
	if err := admin.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN tollgate'",
		strings.TrimPrefix(mustParseURL(b, u).Path, "/")).Scan(&listening); err != nil {
		b.Fatal(err)
	}
	switch {
	case listening == 0 && !pgtest.Pooled(b):
		b.Fatal("no session of the ledger's database is listening: the watch polls")
	case listening == 0:
		b.Log("behind a pooler the watch polls: this measures its poll, not NOTIFY")
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		// A console's refresh ticks at its own phase, not the writer's.
		tick := time.NewTicker(every)
		time.Sleep(time.Duration(i%10) * every / 10)
		if _, err := w.Guard(ctx, fmt.Sprintf("refund:n-%d", i), Payload{"refund", "acct", "1"}, GuardOptions{Agent: "bot"}); err != nil {
			b.Fatal(err)
		}
		acked := time.Now()
		deadline := acked.Add(5 * time.Second)
		for {
			<-tick.C
			ch, err := watch.Changed(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if ch {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("write %d not seen after 5 s", i)
			}
		}
		lat = append(lat, time.Since(acked))
		tick.Stop()
		drain()
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	med, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(ms(med), "median-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(0, "ns/op")
	if b.N >= 20 && med > 100*time.Millisecond {
		b.Errorf("a write was seen %.1f ms after its commit at the median (p99 %.1f ms); issue 26 asks for 100 ms", ms(med), ms(p99))
	}
}

func mustParseURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

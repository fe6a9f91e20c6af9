package ledger

import (
	"database/sql"
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

var pgAgentsFor = flag.Duration("pgagents.for", 3*time.Second, "how long each of BenchmarkPostgresAgents's runs writes (issue 25 measures 10 s)")

// BenchmarkPostgresAgents measures issue 25's speed goal on PostgreSQL:
// n agents (1, 8, 32), each a store of its own logged in as an agent's
// role, guard new keys for -pgagents.for, and, interleaved with them in
// the same run, n connections each insert new keys into the seed's bare
// table (one INSERT ... ON CONFLICT DO NOTHING per call, autocommit,
// through pgx: the honest baseline, not tollgate's schema). It reports
// both rates, their ratio, tollgate's p50 and p99 and the slowest agent's
// count against the mean. The goals (ratio >= 0.7 at 1 agent, >= 0.5 at
// 8 and 32, p99 <= 25 ms at 32, the slowest agent >= half the mean) are
// not yet met (README, "PostgreSQL at scale"); only starvation fails the
// benchmark, since the chain head's lock serializes writers and the
// queue behind it must stay fair (judged once each agent averages 20
// guards). Quote figures from a cluster with fsync on
// (TOLLGATE_PG_FSYNC=on .ci/postgres), as the issue measured.
func BenchmarkPostgresAgents(b *testing.B) {
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			owner := pgtest.DB(b)
			admin := openBench(b, owner)
			if _, err := admin.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Auto}, "root"); err != nil {
				b.Fatal(err)
			}
			agentURL := pgtest.Role(b, owner, "bot", "tollgate_agent")
			// Each agent guards under a name of its own, which its role
			// may use only once an operator (here the owner) allowed it
			// (schema 28).
			cfg, err := pgx.ParseConfig(agentURL)
			if err != nil {
				b.Fatal(err)
			}
			for w := range n {
				if _, err := admin.AllowAgent(ctx, cfg.User, fmt.Sprintf("bot%d", w)); err != nil {
					b.Fatal(err)
				}
			}
			base := pgtest.DB(b)
			seedTable(b, base)
			for i := range b.N {
				tg := agentRun(b, n, *pgAgentsFor, func(w int) (func(key string) error, func()) {
					s := openBench(b, agentURL)
					return func(key string) error {
						_, err := s.Guard(ctx, key, Payload{"run", "acct", key}, GuardOptions{Agent: fmt.Sprintf("bot%d", w)})
						return err
					}, func() {}
				}, fmt.Sprintf("run:%d", i))
				raw := agentRun(b, n, *pgAgentsFor, func(int) (func(key string) error, func()) {
					db, err := sql.Open("pgx", base)
					if err != nil {
						b.Fatal(err)
					}
					db.SetMaxOpenConns(1)
					digest := pay.Digest()
					return func(key string) error {
						_, err := db.Exec("INSERT INTO intents VALUES ($1, $2, 'recorded') ON CONFLICT (action_key) DO NOTHING", key, digest)
						return err
					}, func() { db.Close() }
				}, fmt.Sprintf("raw:%d", i))
				b.ReportMetric(tg.perSec, "guards/s")
				b.ReportMetric(raw.perSec, "baseline/s")
				b.ReportMetric(tg.perSec/raw.perSec, "guard/baseline")
				b.ReportMetric(ms(tg.p50), "p50-ms")
				b.ReportMetric(ms(tg.p99), "p99-ms")
				b.ReportMetric(ms(raw.p99), "baseline-p99-ms")
				b.ReportMetric(tg.minCount/tg.mean, "min/mean")
				if tg.mean >= 20 && tg.minCount < tg.mean/2 {
					b.Errorf("%d agents: the slowest made %.0f guards against a mean of %.0f (goal: at least half)", n, tg.minCount, tg.mean)
				}
			}
		})
	}
}

// seedTable creates the seed fixture's table, as its own code does.
func seedTable(b *testing.B, url string) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE intents (action_key TEXT PRIMARY KEY, payload_sha256 TEXT NOT NULL,
		status TEXT NOT NULL CHECK (status = 'recorded'))`); err != nil {
		b.Fatal(err)
	}
}

// agentStats is one run's rate, latencies and fairness.
type agentStats struct {
	perSec, minCount, mean float64
	p50, p99               time.Duration
}

// agentRun runs n workers, each made by mk, writing new keys (prefixed
// by tag) for d, and summarizes them. Set-up and tear-down are outside
// the measured period.
func agentRun(b *testing.B, n int, d time.Duration, mk func(w int) (func(string) error, func()), tag string) agentStats {
	writes := make([]func(string) error, n)
	for w := range n {
		write, done := mk(w)
		defer done()
		writes[w] = write
	}
	counts := make([]int, n)
	lats := make([][]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	until := start.Add(d)
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(until); i++ {
				t := time.Now()
				if err := writes[w](fmt.Sprintf("%s:%d:%d", tag, w, i)); err != nil {
					errs[w] = err
					return
				}
				lats[w] = append(lats[w], time.Since(t))
				counts[w]++
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	var all []time.Duration
	total := 0
	for w := range n {
		all = append(all, lats[w]...)
		total += counts[w]
	}
	slices.Sort(all)
	at := func(q float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[int(float64(len(all)-1)*q)]
	}
	return agentStats{perSec: float64(total) / elapsed.Seconds(), minCount: float64(slices.Min(counts)),
		mean: float64(total) / float64(n), p50: at(0.5), p99: at(0.99)}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// openBench opens a store for a benchmark, closed when it ends.
func openBench(b *testing.B, u string) *Store {
	b.Helper()
	s, err := Open(ctx, u, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

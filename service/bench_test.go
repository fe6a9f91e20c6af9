package service_test

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/internal/testdata"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/ledger/sqlite"
	"github.com/tollgate-dev/tollgate/service"
)

// The service's benchmarks measure issue 44's speed goals, each beside
// its honest baseline in the same run, the two alternating round by
// round (which goes first alternates too) so that a loaded machine's
// drift falls on both; each reports the medians of the rounds. -benchtime
// Nx runs N rounds; -service.round sets how long each side of a round
// writes. On PostgreSQL (TOLLGATE_TEST_PG set) each runs there too.

var serviceRound = flag.Duration("service.round", time.Second, "how long each side of a round of the service benchmarks writes")

// writeFunc writes one new key.
type writeFunc func(ctx context.Context, key string) error

// roundStats is one side of one round: its rate and 99th percentile.
type roundStats struct {
	perSec float64
	p99    time.Duration
}

// timedRound runs one worker per write function, each writing new keys
// (prefixed by tag) one after another until d has passed.
func timedRound(b *testing.B, writes []writeFunc, d time.Duration, tag string) roundStats {
	lats := make([][]time.Duration, len(writes))
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(d)
	for w, write := range writes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				t0 := time.Now()
				if err := write(context.Background(), fmt.Sprintf("refund:%s-%d-%d", tag, w, i)); err != nil {
					b.Error(err)
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	all := slices.Concat(lats...)
	if len(all) == 0 {
		b.Fatalf("%s: no write finished", tag)
	}
	slices.Sort(all)
	return roundStats{perSec: float64(len(all)) / el.Seconds(), p99: all[len(all)*99/100]}
}

// median is the middle of xs (the mean of the two middle ones).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// rates are the rounds' rates, for a message.
func rates(rs []roundStats) []int {
	var out []int
	for _, r := range rs {
		out = append(out, int(r.perSec))
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// backend is a ledger engine the benchmarks run on: a fresh ledger with
// the refund rule, and n connections to a fresh copy of the seed
// fixture's bare table on the same engine.
type backend struct {
	name     string
	ledger   func(b *testing.B) string
	baseline func(b *testing.B, n int) []writeFunc
}

// backends are SQLite, and PostgreSQL when TOLLGATE_TEST_PG is set.
func backends() []backend {
	bs := []backend{{"sqlite", func(b *testing.B) string { return filepath.Join(b.TempDir(), "ledger.db") }, sqliteSeed}}
	if os.Getenv("TOLLGATE_TEST_PG") != "" {
		bs = append(bs, backend{"postgres", func(b *testing.B) string { return pgtest.DB(b) }, postgresSeed})
	}
	return bs
}

var seedCreate, seedInsert = testdata.SeedFixture()

// seedPayload is the digest the baselines store, as the seed's own
// client computes one per call.
var benchPayload = ledger.Payload{Kind: "refund", Target: "acct", Body: "10 EUR"}

// seedRecord is the seed fixture's record_intent on one connection: in
// one transaction, the insert that does nothing on a known key and the
// read of the stored digest it compares.
func seedRecord(db *sql.DB, rebind func(string) string) writeFunc {
	sel := rebind("SELECT payload_sha256 FROM intents WHERE action_key = ?")
	ins := rebind(seedInsert)
	return func(ctx context.Context, key string) error {
		digest := benchPayload.Digest()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, ins, key, digest); err != nil {
			return err
		}
		var stored string
		if err := tx.QueryRowContext(ctx, sel, key).Scan(&stored); err != nil {
			return err
		}
		if stored != digest {
			return fmt.Errorf("%s binds another payload", key)
		}
		return tx.Commit()
	}
}

// sqliteSeed is the seed's table alone in its own file, with the
// ledger's pragmas and WAL, one writing connection per writer (each an
// immediate transaction, as the ledger's writer takes).
func sqliteSeed(b *testing.B, n int) []writeFunc {
	path := filepath.Join(b.TempDir(), "seed.db")
	var ws []writeFunc
	for i := range n {
		db, err := sql.Open("sqlite", sqlite.WriterDSN(path))
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		b.Cleanup(func() { db.Close() })
		if i == 0 {
			for _, q := range []string{"PRAGMA journal_mode = WAL", seedCreate} {
				if _, err := db.Exec(q); err != nil {
					b.Fatal(err)
				}
			}
		}
		ws = append(ws, seedRecord(db, func(q string) string { return q }))
	}
	return ws
}

// postgresSeed is the seed's table in a database of its own, one pgx
// connection per writer.
func postgresSeed(b *testing.B, n int) []writeFunc {
	url := pgtest.DB(b)
	var ws []writeFunc
	for i := range n {
		db, err := sql.Open("pgx", url)
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		b.Cleanup(func() { db.Close() })
		if i == 0 {
			if _, err := db.Exec(seedCreate); err != nil {
				b.Fatal(err)
			}
		}
		ws = append(ws, seedRecord(db, dollars))
	}
	return ws
}

// dollars numbers a statement's ? placeholders $1, $2, ... for pgx.
func dollars(q string) string {
	var out strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&out, "$%d", n)
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}

// withRefundRule opens path once to set the auto rule the guards take.
func withRefundRule(b *testing.B, path string) string {
	s, err := ledger.Open(context.Background(), path, ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SetPolicy(context.Background(), approvals.Rule{Pattern: "refund", Mode: approvals.Auto}, "root"); err != nil {
		b.Fatal(err)
	}
	return path
}

// serveBench serves the ledger at path over a Unix socket, as `tollgate
// serve` does (one store with group commit), and returns the socket.
func serveBench(b *testing.B, path string) string {
	s, err := ledger.Open(context.Background(), path, ledger.Options{GroupCommit: true})
	if err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(b.TempDir(), "s.sock")
	ln, err := service.Listen("unix:"+sock, service.SocketPolicy{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		b.Fatal(err)
	}
	srv := service.NewServer(service.Config{Ledger: s, Socket: service.SocketPolicy{Users: []string{u.Username}}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, time.Second, ln) }()
	b.Cleanup(func() {
		cancel()
		<-done
		s.Close()
	})
	return sock
}

// serviceAgents are n agents, each a client of its own over the socket.
func serviceAgents(b *testing.B, sock string, n int) []writeFunc {
	var ws []writeFunc
	for range n {
		c, err := service.NewClient("unix://"+sock, service.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		ws = append(ws, func(ctx context.Context, key string) error {
			a, err := c.Guard(ctx, key, benchPayload, ledger.GuardOptions{})
			if err == nil && a.Verdict != ledger.Permitted {
				err = fmt.Errorf("%s: %s", key, a.Verdict)
			}
			return err
		})
	}
	return ws
}

// directAgents are n agents, each with a store of its own on the ledger,
// as agent processes (the CLI) have, without a process's start-up.
func directAgents(b *testing.B, path string, n int) []writeFunc {
	var ws []writeFunc
	for i := range n {
		s, err := ledger.Open(context.Background(), path, ledger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		agent := fmt.Sprintf("bot-%d", i)
		ws = append(ws, func(ctx context.Context, key string) error {
			a, err := s.Guard(ctx, key, benchPayload, ledger.GuardOptions{Agent: agent})
			if err == nil && a.Verdict != ledger.Permitted {
				err = fmt.Errorf("%s: %s", key, a.Verdict)
			}
			return err
		})
	}
	return ws
}

// paired runs b.N rounds of two sides, alternating which goes first,
// and returns each side's rounds.
func paired(b *testing.B, first, second []writeFunc, names [2]string) (x, y []roundStats) {
	for i := range b.N {
		tag := fmt.Sprint(i)
		if i%2 == 0 {
			x = append(x, timedRound(b, first, *serviceRound, names[0]+tag))
			y = append(y, timedRound(b, second, *serviceRound, names[1]+tag))
		} else {
			y = append(y, timedRound(b, second, *serviceRound, names[1]+tag))
			x = append(x, timedRound(b, first, *serviceRound, names[0]+tag))
		}
	}
	return x, y
}

// report reports the medians of both sides and of their per-round
// ratio (y over x), and returns that ratio.
func report(b *testing.B, x, y []roundStats, xName, yName string) float64 {
	var xr, yr, ratio, xp, yp []float64
	for i := range x {
		xr, yr = append(xr, x[i].perSec), append(yr, y[i].perSec)
		ratio = append(ratio, y[i].perSec/x[i].perSec)
		xp, yp = append(xp, ms(x[i].p99)), append(yp, ms(y[i].p99))
	}
	b.ReportMetric(median(yr), yName+"-guards/s")
	b.ReportMetric(median(xr), xName+"/s")
	b.ReportMetric(median(ratio), yName+"/"+xName)
	b.ReportMetric(median(yp), yName+"-p99-ms")
	b.ReportMetric(median(xp), xName+"-p99-ms")
	b.ReportMetric(0, "ns/op") // a round is not an op
	return median(ratio)
}

// BenchmarkServiceAgents: new keys guarded through the service by 1, 8
// and 32 concurrent agents (each a client over the Unix socket, the
// server one store with group commit) against the same number of
// writers recording new keys into the seed fixture's bare table on the
// same engine (record_intent's transaction: the insert and the read of
// the stored digest; one connection per writer). Issue 44's goals:
// service/seed >= 0.6 at 32 agents on SQLite, >= 0.5 on PostgreSQL, the
// service's p99 <= 20 ms at 32; reported, not enforced.
//
//	go test ./service -run '^$' -bench '^BenchmarkServiceAgents$' -benchtime 5x
func BenchmarkServiceAgents(b *testing.B) {
	for _, be := range backends() {
		for _, n := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("%s/agents=%d", be.name, n), func(b *testing.B) {
				seed := be.baseline(b, n)
				svc := serviceAgents(b, serveBench(b, withRefundRule(b, be.ledger(b))), n)
				b.ResetTimer()
				x, y := paired(b, seed, svc, [2]string{"seed", "svc"})
				report(b, x, y, "seed", "service")
			})
		}
	}
}

// BenchmarkServiceVsDirect32 is CI's gate: 32 agents through the service
// against 32 agents each with a store of its own on the same ledger (the
// direct path the CLI takes), interleaved; it fails when the service's
// median rate is below the direct path's.
//
//	go test ./service -run '^$' -bench '^BenchmarkServiceVsDirect32$' -benchtime 5x
func BenchmarkServiceVsDirect32(b *testing.B) {
	const n = 32
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			path := withRefundRule(b, be.ledger(b))
			direct := directAgents(b, path, n)
			svc := serviceAgents(b, serveBench(b, path), n)
			b.ResetTimer()
			x, y := paired(b, direct, svc, [2]string{"direct", "svc"})
			// The framework's first call, with one round, only probes:
			// the gate judges the median of the rounds asked for.
			if r := report(b, x, y, "direct", "service"); r < 1 && b.N > 1 {
				b.Errorf("%s, %d agents: the service guards at %.2f of the direct path's rate (median of %d interleaved rounds: %v against %v); it must not be slower",
					be.name, n, r, b.N, rates(y), rates(x))
			}
		})
	}
}

// BenchmarkServiceRetry: an identical retry of a settled key through the
// service against GET /healthz, alternating on one keep-alive
// connection, so that the ratio is what the ledger's answer adds to an
// HTTP round trip (issue 44's goal: at most 2x), with and without an
// attempt id (the clients send one). Reports the medians and the median
// of the per-round ratios.
//
//	go test ./service -run '^$' -bench '^BenchmarkServiceRetry$' -benchtime 2000x
func BenchmarkServiceRetry(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			path := withRefundRule(b, be.ledger(b))
			sock := serveBench(b, path)
			ctx := context.Background()
			c, err := service.NewClient("unix://"+sock, service.ClientOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			const key = "refund:retry-1"
			a, err := c.Guard(ctx, key, benchPayload, ledger.GuardOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Report(ctx, key, a.PermitID, ledger.Succeeded, ledger.ReportOptions{}); err != nil {
				b.Fatal(err)
			}
			// One connection: every request of the loop reuses it.
			tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			}}
			hc := &http.Client{Transport: tr}
			defer tr.CloseIdleConnections()
			body := guardBody(benchPayload.Kind, benchPayload.Target, benchPayload.Body)
			do := func(req *http.Request, want int) time.Duration {
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				d := time.Since(t0)
				if resp.StatusCode != want {
					b.Fatalf("%s %s: %d, want %d", req.Method, req.URL.Path, resp.StatusCode, want)
				}
				return d
			}
			// A retry as a client sends it carries its call's attempt id,
			// which the ledger first looks up (a lost answer's permit);
			// one without is answered from the key's row alone.
			retry := func(attempt string) time.Duration {
				req, _ := http.NewRequest("POST", "http://tollgate.sock/v1/guard", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", key)
				if attempt != "" {
					req.Header.Set(service.HeaderAttempt, attempt)
				}
				return do(req, http.StatusOK)
			}
			health := func() time.Duration {
				req, _ := http.NewRequest("GET", "http://tollgate.sock/healthz", nil)
				return do(req, http.StatusOK)
			}
			health() // the connection is open before the first pair
			var rs, ras, hs, ratio, ratioA []float64
			b.ResetTimer()
			for i := range b.N {
				attempt := fmt.Sprintf("bench-attempt-%08d", i)
				var r, ra, h time.Duration
				if i%2 == 0 {
					h, r, ra = health(), retry(""), retry(attempt)
				} else {
					ra, r, h = retry(attempt), retry(""), health()
				}
				rs, ras, hs = append(rs, float64(r.Microseconds())), append(ras, float64(ra.Microseconds())), append(hs, float64(h.Microseconds()))
				ratio, ratioA = append(ratio, float64(r)/float64(h)), append(ratioA, float64(ra)/float64(h))
			}
			b.StopTimer()
			b.ReportMetric(median(rs), "retry-us")
			b.ReportMetric(median(ras), "retry-attempt-us")
			b.ReportMetric(median(hs), "healthz-us")
			b.ReportMetric(median(ratio), "retry/healthz")
			b.ReportMetric(median(ratioA), "retry-attempt/healthz")
		})
	}
}

package service_test

import (
	"context"
	"fmt"
	"os/user"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/service"
)

// guardFunc guards one new key.
type guardFunc func(ctx context.Context, key string) error

// runGuards runs n guards of new keys over workers goroutines, each with
// its own guardFunc, and reports guards/s and the 99th percentile.
func runGuards(b *testing.B, workers int, guards []guardFunc, prefix string) {
	var next atomic.Int64
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				t0 := time.Now()
				if err := guards[w](context.Background(), fmt.Sprintf("refund:%s-%d", prefix, i)); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/el.Seconds(), "guards/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	}
}

func benchLedger(b *testing.B) string {
	db := filepath.Join(b.TempDir(), "ledger.db")
	s, err := ledger.Open(context.Background(), db, ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.SetPolicy(context.Background(), approvals.Rule{Pattern: "refund", Mode: approvals.Auto}, "root"); err != nil {
		b.Fatal(err)
	}
	s.Close()
	return db
}

// BenchmarkGuardsThroughService: new keys guarded by 1, 8 and 32
// concurrent agents through the service (one store with group commit,
// HTTP over a Unix socket) against the direct path at the same
// concurrency (each agent its own store on the same SQLite file, as
// agent processes have). Figures: docs/service.md.
func BenchmarkGuardsThroughService(b *testing.B) {
	p := ledger.Payload{Kind: "refund", Target: "acct", Body: "10 EUR"}
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("direct/agents=%d", n), func(b *testing.B) {
			db := benchLedger(b)
			guards := make([]guardFunc, n)
			for i := range n {
				s, err := ledger.Open(context.Background(), db, ledger.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				guards[i] = func(ctx context.Context, key string) error {
					_, err := s.Guard(ctx, key, p, ledger.GuardOptions{Agent: "bench"})
					return err
				}
			}
			runGuards(b, n, guards, "d")
		})
		b.Run(fmt.Sprintf("service/agents=%d", n), func(b *testing.B) {
			db := benchLedger(b)
			s, err := ledger.Open(context.Background(), db, ledger.Options{GroupCommit: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			sock := filepath.Join(b.TempDir(), "s.sock")
			ln, err := service.Listen("unix:"+sock, service.SocketPolicy{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			u, err := user.Current()
			if err != nil {
				b.Fatal(err)
			}
			srv := service.NewServer(service.Config{Ledger: s, Socket: service.SocketPolicy{Users: []string{u.Username}}, Rate: 0})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx, time.Second, ln) }()
			defer func() { cancel(); <-done }()
			guards := make([]guardFunc, n)
			for i := range n {
				c, err := service.NewClient("unix://"+sock, service.ClientOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				guards[i] = func(ctx context.Context, key string) error {
					a, err := c.Guard(ctx, key, p, ledger.GuardOptions{})
					if err == nil && a.Verdict != ledger.Permitted {
						err = fmt.Errorf("%s: %s", key, a.Verdict)
					}
					return err
				}
			}
			runGuards(b, n, guards, "s")
		})
	}
}

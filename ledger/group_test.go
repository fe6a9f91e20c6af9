package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

func openGrouped(t testing.TB) *Store {
	t.Helper()
	s, err := Open(ctx, testLedger(t), Options{GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGroupCommitSharesCommits: 64 goroutines guarding keys of their own
// at once on a grouped store get each its own permit, in fewer commits
// than calls on SQLite, and the ledger verifies. On PostgreSQL a grouped
// store guards each key on its own (a batch would take the ledger-wide
// lock alone, which an agent's role may not, schema 20): a commit each.
func TestGroupCommitSharesCommits(t *testing.T) {
	s := openGrouped(t)
	const n = 64
	before := s.commits.Load()
	answers := make([]Answer, n)
	errs := make([]error, n)
	atOnce(n, func(i int) {
		answers[i], errs[i] = s.Guard(ctx, fmt.Sprintf("g:%d", i), Payload{"refund", "t", fmt.Sprint(i)}, GuardOptions{Agent: "bot"})
	})
	permits := map[string]bool{}
	for i := range n {
		if errs[i] != nil || answers[i].Verdict != Permitted || answers[i].Key != fmt.Sprintf("g:%d", i) || answers[i].PermitID == "" {
			t.Fatalf("call %d: %+v %v", i, answers[i], errs[i])
		}
		permits[answers[i].PermitID] = true
	}
	commits := s.commits.Load() - before
	if len(permits) != n || !onPostgres && commits >= n || onPostgres && commits != n {
		t.Fatalf("%d distinct permits in %d commits for %d calls", len(permits), commits, n)
	}
	requireVerified(t, s)
	t.Logf("%d calls in %d commits", n, commits)
}

// atOnce runs fn(0..n-1) in n goroutines released together, and waits.
func atOnce(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

func requireVerified(t *testing.T, s *Store) {
	t.Helper()
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep.Problems, err)
	}
}

// TestGroupCommitIsolatesFailures: in batches where some calls append
// events and then fail, those calls leave nothing (no row, no event, the
// chain head where it was) and every other call's writes stand; refusals
// that are facts (a conflict) are kept; the ledger verifies.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	s := openGrouped(t)
	if _, err := s.Guard(ctx, "dup", Payload{"refund", "t", "first"}, GuardOptions{Agent: "bot"}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	const n = 48
	errs := make([]error, n)
	atOnce(n, func(i int) {
		switch i % 3 {
		case 0: // a good call
			_, errs[i] = s.Guard(ctx, fmt.Sprintf("ok:%d", i), Payload{"refund", "t", "b"}, GuardOptions{Agent: "bot"})
		case 1: // appends an event committing a row, then fails
			errs[i] = s.write(ctx, func(tx *Tx) error {
				ref, err := insertFact(ctx, tx, "epochs", "epoch, operator, at_ms", fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "root", tx.now)
				if err != nil {
					return err
				}
				if err := appendEvent(ctx, tx, "", evEpochActivated, "root", map[string]any{}, tx.now, &ref); err != nil {
					return err
				}
				return boom
			})
		case 2: // a conflict: refused, and the conflict row is a fact
			_, errs[i] = s.Guard(ctx, "dup", Payload{"refund", "t", fmt.Sprint("other", i)}, GuardOptions{Agent: "bot"})
		}
	})
	for i, err := range errs {
		switch i % 3 {
		case 0:
			if err != nil {
				t.Fatalf("good call %d: %v", i, err)
			}
		case 1:
			if !errors.Is(err, boom) {
				t.Fatalf("failing call %d: %v", i, err)
			}
		case 2:
			if ce := (*ConflictError)(nil); !errors.As(err, &ce) {
				t.Fatalf("conflicting call %d: %v", i, err)
			}
		}
	}
	var epochs, conflicts, intents int
	db := s.r
	db.QueryRow("SELECT count(*) FROM epochs").Scan(&epochs)
	db.QueryRow("SELECT count(*) FROM conflicts").Scan(&conflicts)
	db.QueryRow("SELECT count(*) FROM intents").Scan(&intents)
	if epochs != 0 || conflicts != n/3 || intents != n/3+1 {
		t.Fatalf("epochs %d (want 0), conflicts %d (want %d), intents %d (want %d)", epochs, conflicts, n/3, intents, n/3+1)
	}
	requireVerified(t, s)
}

// TestGroupCommitCallerGivesUp: a caller whose context ends while it
// waits behind a batch gets its context's error and writes nothing; the
// others are answered as usual.
func TestGroupCommitCallerGivesUp(t *testing.T) {
	s := openGrouped(t)
	// A leader holding the batch open lets the others queue behind it.
	hold, release := make(chan struct{}), make(chan struct{})
	go s.write(ctx, func(tx *Tx) error {
		close(hold)
		<-release
		return nil
	})
	<-hold
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := s.Guard(cctx, "gone", Payload{"refund", "t", "b"}, GuardOptions{Agent: "bot"})
		gaveUp <- err
	}()
	stayed := make(chan error, 1)
	go func() {
		_, err := s.Guard(ctx, "kept", Payload{"refund", "t", "b"}, GuardOptions{Agent: "bot"})
		stayed <- err
	}()
	time.Sleep(50 * time.Millisecond) // both queued behind the held batch
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that gave up: %v", err)
	}
	close(release)
	if err := <-stayed; err != nil {
		t.Fatalf("the caller that stayed: %v", err)
	}
	if _, err := s.Status(ctx, "gone"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the abandoned key was written: %v", err)
	}
	if _, err := s.Status(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	requireVerified(t, s)
}

// BenchmarkGroupCommit: guards of new keys (auto policy, a durable commit
// each) from 1, 8 and 64 goroutines of one process, each round once on a
// store committing every call alone and once on one grouping them,
// interleaved on two files. Reports the median calls/s of each and the
// ratio; fails when grouping loses at 1 caller by more than noise (0.8)
// or does not win at 64.
func BenchmarkGroupCommit(b *testing.B) {
	levels := []int{1, 8, 64}
	const perRound = 128
	stores := map[bool]*Store{}
	for _, grouped := range []bool{false, true} {
		s, err := Open(ctx, testLedger(b), Options{GroupCommit: grouped})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Auto}, "root"); err != nil {
			b.Fatal(err)
		}
		stores[grouped] = s
	}
	rates := map[string][]float64{}
	commits := map[string]int64{}

	round := func(s *Store, callers int) float64 {
		var wg sync.WaitGroup
		start := time.Now()
		for g := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < perRound/callers; j++ {

					if _, err := s.Guard(ctx, fmt.Sprintf("b:%d:%d:%d:%d", callers, g, j, time.Now().UnixNano()), Payload{"refund", "t", "b"}, GuardOptions{Agent: "bot"}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return float64(perRound) / time.Since(start).Seconds()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range levels {
			for _, grouped := range []bool{i%2 == 0, i%2 != 0} { // alternate which goes first
				name := fmt.Sprintf("%d-callers-%s", c, map[bool]string{false: "alone", true: "grouped"}[grouped])
				before := stores[grouped].commits.Load()
				rates[name] = append(rates[name], round(stores[grouped], c))
				commits[name] += stores[grouped].commits.Load() - before
			}
		}
	}
	b.StopTimer()
	med := func(v []float64) float64 {
		v = append([]float64(nil), v...)
		slices.Sort(v)
		return v[len(v)/2]
	}
	for _, c := range levels {
		alone, grouped := med(rates[fmt.Sprintf("%d-callers-alone", c)]), med(rates[fmt.Sprintf("%d-callers-grouped", c)])
		b.ReportMetric(alone, fmt.Sprintf("calls/s-%d-alone", c))
		b.ReportMetric(grouped, fmt.Sprintf("calls/s-%d-grouped", c))
		b.ReportMetric(grouped/alone, fmt.Sprintf("grouped/alone-%d", c))
		b.ReportMetric(float64(perRound*b.N)/float64(commits[fmt.Sprintf("%d-callers-grouped", c)]), fmt.Sprintf("calls/commit-%d", c))
		switch {
		case b.N >= 5 && c == 1 && grouped/alone < 0.8:
			b.Errorf("one caller: grouped %.0f calls/s against %.0f alone", grouped, alone)
		case b.N >= 5 && c == 64 && grouped <= alone:
			b.Errorf("64 callers: grouped %.0f calls/s, no better than %.0f alone", grouped, alone)
		}
	}
}

// TestConcurrentCallersColdCache: many goroutines of one process deciding
// and reading at once on a store whose statement cache is still empty,
// committing alone and grouped. The cache once held its lock while
// preparing a missed statement, which waits for a connection, while the
// transaction holding the only writer connection waited for that lock:
// every call then hung until its deadline (the console's batch approve).
func TestConcurrentCallersColdCache(t *testing.T) {
	for _, grouped := range []bool{false, true} {
		t.Run(fmt.Sprint("grouped=", grouped), func(t *testing.T) {
			path := testLedger(t)
			setup, err := Open(ctx, path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			setup.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Approval, TTL: time.Hour}, "root")
			const n = 12
			for i := range n {
				if _, err := setup.Guard(ctx, fmt.Sprint("k:", i), Payload{"refund", "t", "b"}, GuardOptions{Agent: "bot"}); err != nil {
					t.Fatal(err)
				}
			}
			setup.Close()
			s, err := Open(ctx, path, Options{GroupCommit: grouped})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			errs := make([]error, 2*n)
			for i := range n {
				wg.Add(2)
				go func() {
					defer wg.Done()
					_, errs[i] = s.Approve(dctx, fmt.Sprint("k:", i), "alice", "ok")
				}()
				go func() {
					defer wg.Done()
					_, errs[n+i] = s.Status(dctx, fmt.Sprint("k:", (i+1)%n))
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			requireVerified(t, s)
		})
	}
}

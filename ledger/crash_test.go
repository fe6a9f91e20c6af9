package ledger

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// crashChild guards and reports as fast as it can, printing a line only
// after each call returned success: those lines are the promises the
// parent checks after killing it.
func crashChild(s *Store, id int) int {
	out := os.Stdout // unbuffered: a printed line is a returned call
	fmt.Fprintln(out, "ready")
	for i := 0; ; i++ {
		key := fmt.Sprintf("crash:p%d-%d", id, i)
		if i%3 == 0 {
			key = fmt.Sprintf("crash:shared-%d", i%60) // contended with the other writer
		}
		a, err := s.Guard(ctx, key, Payload{"job", "t", "b"}, GuardOptions{Agent: fmt.Sprintf("w%d", id), Lease: time.Second})
		if err != nil {
			fmt.Fprintf(os.Stderr, "guard %s: %v\n", key, err)
			return 1
		}
		if a.PermitID == "" {
			continue
		}
		fmt.Fprintf(out, "permit %s %s\n", key, a.PermitID)
		if i%2 == 0 {
			if _, err := s.Report(ctx, key, a.PermitID, Succeeded, ReportOptions{}); err != nil {
				fmt.Fprintf(os.Stderr, "report %s: %v\n", key, err)
				return 1
			}
			fmt.Fprintf(out, "report %s\n", key)
		}
	}
}

// TestCrashWithSIGKILL kills writer processes at random moments, two at a
// time, and checks that what they were told is stored, and nothing else
// went wrong.
func TestCrashWithSIGKILL(t *testing.T) {
	rounds := 50
	if testing.Short() {
		rounds = 10
	}
	path := testLedger(t)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.SetPolicy(ctx, approvals.Rule{Pattern: "job", Mode: approvals.Auto}, "root")
	s.Close()
	permits := map[string]string{} // key -> permit id the caller was given
	reported := map[string]bool{}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := 0; w < 2; w++ {
			id := round*2 + w
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "TOLLGATE_CHILD=crash", "TOLLGATE_CHILD_DB="+path, fmt.Sprintf("TOLLGATE_CHILD_ID=%d", id))
			stdout, _ := cmd.StdoutPipe()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			// The first writer of a round is killed at a random moment
			// after its first permit, the second after it opened the
			// ledger (its first guard may be cut): every round then gives
			// at least one permit to check, however slow the machine (a
			// loaded one under the race detector gave fewer than the
			// rounds).
			ready, first := make(chan struct{}), make(chan struct{})
			afterPermit := w == 0
			go func() {
				defer wg.Done()
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					f := strings.Fields(sc.Text())
					mu.Lock()
					switch {
					case len(f) == 1 && f[0] == "ready":
						close(ready)
					case len(f) == 3 && f[0] == "permit":
						if afterPermit {
							afterPermit = false
							close(first)
						}
						if old, ok := permits[f[1]]; ok && old != f[2] {
							t.Errorf("key %s was given two permits: %s and %s", f[1], old, f[2])
						}
						permits[f[1]] = f[2]
					case len(f) == 2 && f[0] == "report":
						reported[f[1]] = true
					}
					mu.Unlock()
				}
			}()
			// Kill at a random moment after the writer has opened the
			// ledger, so that every kill lands in the middle of its work
			// however slow the start (the race detector slows it a lot).
			// On PostgreSQL a writer's first guard also logs in over TLS and
			// plans the database's checks: a longer spread, or most writers
			// die before their first permit on a loaded machine.
			spread := 150
			if onPostgres {
				spread = 600
			}
			delay := time.Duration(10+rng.IntN(spread)) * time.Millisecond
			wait := ready
			if w == 0 {
				wait = first
			}
			go func() {
				select {
				case <-wait:
				case <-time.After(30 * time.Second):
				}
				time.Sleep(delay)
				cmd.Process.Signal(syscall.SIGKILL)
			}()
			defer func() {
				err := cmd.Wait()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
					t.Errorf("writer %d ended by itself (%v): %s", id, err, stderr.String())
				}
			}()
		}
		wg.Wait()
	}
	if len(permits) < rounds {
		t.Fatalf("only %d permits acknowledged: the writers were killed too early to test anything", len(permits))
	}
	// After the leases ran out, check every promise.
	later := func() time.Time { return time.Now().Add(5 * time.Second) }
	s, err = Open(ctx, path, Options{Now: later})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify after %d kills: %+v %v", rounds*2, rep, err)
	}
	for key, permit := range permits {
		d, err := s.Status(ctx, key)
		if err != nil {
			t.Fatalf("acknowledged key %s is missing: %v", key, err)
		}
		if d.PermitID != permit {
			t.Fatalf("key %s: stored permit %s, caller was given %s", key, d.PermitID, permit)
		}
		switch {
		case reported[key] && d.State != StateSucceeded:
			t.Fatalf("key %s: acknowledged report but state %s", key, d.State)
		case !reported[key] && d.State != StateUncertain && d.State != StateSucceeded:
			t.Fatalf("key %s: holder died, state %s, want uncertain", key, d.State)
		}
	}
	var dup int
	rawDB(t, path).QueryRow("SELECT count(*) FROM (SELECT action_key FROM permits GROUP BY action_key HAVING count(*) > 1)").Scan(&dup)
	if dup != 0 {
		t.Fatalf("%d keys with two permits", dup)
	}
	t.Logf("%d kills, %d permits and %d reports acknowledged, %d events", rounds*2, len(permits), len(reported), rep.Events)
}

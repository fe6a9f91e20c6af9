package ledger

import (
	"fmt"
	"sync"
	"testing"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestVerifyIsOneSnapshot: verify reads many tables; with writers
// appending all the while, every verify still sees one moment of the
// ledger (on PostgreSQL a read transaction is REPEATABLE READ: under its
// default each statement had its own snapshot, and verify saw the events
// of one moment and the chain head of the next).
func TestVerifyIsOneSnapshot(t *testing.T) {
	s, _ := openTest(t)
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "job", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	// Four writers, each a bounded run of guards (a verify of a ledger
	// that grows without end gets slower each time, under the race
	// detector for minutes); verify runs again and again until they end.
	per := 60
	if testing.Short() {
		per = 15
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if _, err := s.Guard(ctx, fmt.Sprintf("snap-%d-%d", w, i), Payload{"job", "t", "b"}, GuardOptions{Agent: "w"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for i := 0; ; i++ {
		rep, err := s.Verify(ctx)
		if err != nil || !rep.OK() {
			<-done
			t.Fatalf("verify %d while writers append: %v %+v", i, err, rep.Problems)
		}
		select {
		case <-done:
			return
		default:
		}
	}
}

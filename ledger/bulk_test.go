package ledger

import (
	"fmt"
	"testing"

	"github.com/tollgate-dev/tollgate/approvals"
)

func TestBulkGuardMatchesSingleCalls(t *testing.T) {
	s, _ := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "auto", Mode: approvals.Auto}, "root")
	var items []BulkItem
	for i := 0; i < 50; i++ {
		kind := []string{"auto", "ask"}[i%2]
		items = append(items, BulkItem{Key: fmt.Sprintf("b:%d", i), Payload: Payload{kind, "t", "x"}, Agent: "bulk", RecordOnly: i%10 == 0})
	}
	items = append(items, BulkItem{Key: "b:1", Payload: Payload{"ask", "t", "changed"}})
	n, err := s.BulkGuard(ctx, items)
	if err != nil || n != 1 {
		t.Fatalf("bulk: %d conflicts, %v", n, err)
	}
	c, _ := s.Counts(ctx)
	if c.All != 50 || c.Pending != 25 || c.Conflicts != 1 {
		t.Fatalf("counts %+v", c)
	}
	if rows, _ := s.List(ctx, Filter{State: StateRecorded}); len(rows) != 5 {
		t.Fatalf("%d record-only rows", len(rows))
	}
	// A later single Guard replays what the bulk call stored.
	a, err := s.Guard(ctx, "b:3", Payload{"ask", "t", "x"}, GuardOptions{})
	if err != nil || !a.Replayed || a.State != StatePending {
		t.Fatalf("guard after bulk: %+v %v", a, err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

package ledger

import (
	"context"
	"slices"
	"testing"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestGuardAnswerMarksCallerAsserted: the fields a transport lists as the
// caller's (the MCP proxy's --caller-context) are named in guard's answer,
// the fresh one and an identical retry's, and in status; a context with
// none names none.
func TestGuardAnswerMarksCallerAsserted(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "invoice", Mode: approvals.Auto}, "alice"); err != nil {
		t.Fatal(err)
	}
	p := Payload{Kind: "invoice", Target: "acme", Body: `{"cents":900}`}
	cx, err := ParseContext([]byte(`{"amount":9,"region":"eu","caller_asserted":["amount"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		a, err := s.Guard(ctx, "invoice:c1", p, GuardOptions{Context: cx})
		if err != nil || !slices.Equal(a.CallerAsserted, []string{"amount"}) {
			t.Fatalf("guard %d: caller's fields %v, %v", i, a.CallerAsserted, err)
		}
	}
	if d, err := s.Status(ctx, "invoice:c1"); err != nil || !slices.Equal(d.CallerAsserted, []string{"amount"}) {
		t.Fatalf("status: caller's fields %v, %v", d.CallerAsserted, err)
	}
	plain, _ := ParseContext([]byte(`{"amount":9}`))
	if a, err := s.Guard(ctx, "invoice:c2", p, GuardOptions{Context: plain}); err != nil || len(a.CallerAsserted) != 0 {
		t.Fatalf("no caller's fields: %v, %v", a.CallerAsserted, err)
	}
}

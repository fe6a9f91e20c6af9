package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestPolicyReadsTheBody: a rule on action.body decides by what will
// execute, on either engine (TOLLGATE_TEST_BACKEND=postgres runs it on
// the database, whose own evaluator must agree with the client's or
// refuse the evaluation). The caller's context cannot move it; a body
// without the field, a redacted body and a missing context field all
// fail closed to approval; verify re-derives each decision.
func TestPolicyReadsTheBody(t *testing.T) {
	s, _ := openTest(t)
	for _, r := range []approvals.Rule{
		{Pattern: "mcp.*", Mode: approvals.Auto},
		{Pattern: "mcp.send_invoice", Mode: approvals.Approval, TTL: time.Hour, Condition: "action.body.cents > 10000"},
		{Pattern: "pay*", Mode: approvals.Auto},
		{Pattern: "pay*", Mode: approvals.Approval, TTL: time.Hour, Condition: "context.amount > 5000"},
	} {
		if _, err := s.SetPolicy(ctx, r, "root"); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		key, kind, body string
		ctx             Context
		redact          bool
		verdict         Verdict
		why             string
	}{
		{"inv:big", "mcp.send_invoice", `{"customer":"acme","cents":900000}`, Context{"amount": 1.0}, false, RetryLater, ""},
		{"inv:small", "mcp.send_invoice", `{"customer":"acme","cents":900}`, Context{"amount": 9000.0}, false, Permitted, ""},
		{"inv:nocents", "mcp.send_invoice", `{"customer":"acme"}`, nil, false, RetryLater, "did not send: action.body.cents"},
		{"inv:text", "mcp.send_invoice", `send it all`, nil, false, RetryLater, "did not send: action.body.cents"},
		{"inv:huge", "mcp.send_invoice", `{"cents": 99999999999999999999}`, nil, false, RetryLater, "beyond int64"},
		{"inv:redacted", "mcp.send_invoice", `{"cents": 1}`, nil, true, RetryLater, "did not send: action.body.cents"},
		{"inv:double", "mcp.send_invoice", `{"cents": 1.5e2}`, nil, false, Permitted, ""},
		{"pay:none", "pay", `x`, nil, false, RetryLater, "did not send: context.amount"},
		{"pay:small", "pay", `x`, Context{"amount": 12.5}, false, Permitted, ""},
	}
	for _, tc := range tests {
		a, err := s.Guard(ctx, tc.key, Payload{tc.kind, "t", tc.body}, GuardOptions{Agent: "bot", Context: tc.ctx, Redact: tc.redact})
		if err != nil || a.Verdict != tc.verdict {
			t.Fatalf("%s: %+v %v, want %s", tc.key, a, err, tc.verdict)
		}
		if tc.why != "" && (a.Rule == nil || a.Rule.FailedRule == 0 || !strings.Contains(a.Rule.Error, tc.why)) {
			t.Fatalf("%s: the answer does not say which rule failed and why: %+v", tc.key, a.Rule)
		}
		d, err := s.Status(ctx, tc.key)
		if err != nil || tc.why != "" && (d.Rule == nil || !strings.Contains(d.Rule.Error, tc.why) || d.Rule.Semantics != approvals.V2) {
			t.Fatalf("%s: status %+v %v", tc.key, d.Rule, err)
		}
	}
	// policy test shows the same.
	r, ex, err := s.PolicyTest(ctx, approvals.Facts{Kind: "mcp.send_invoice", Body: `{"customer":"acme"}`})
	if err != nil || r.Mode != approvals.Approval || ex.FailedRule == 0 {
		t.Fatalf("policy test: %+v %+v %v", r, ex, err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep.Problems, err)
	}
}

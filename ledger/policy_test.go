package ledger

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestPolicyOverContext: rules with CEL conditions over the action's
// context decide at a key's first sight, explain what they read, and
// keep that decision for the key; the context is bound to the key like
// the payload. Runs on both engines.
func TestPolicyOverContext(t *testing.T) {
	s, clk := openTest(t)
	for _, r := range []approvals.Rule{
		{Pattern: "refund.*", Mode: approvals.Approval, TTL: time.Hour},
		{Pattern: "refund.*", Mode: approvals.Auto, Condition: "context.amount <= 50"},
		{Pattern: "refund.*", Mode: approvals.Approval, TTL: time.Hour, Approvers: 2, Condition: "context.amount > 5000"},
		{Pattern: "*", Mode: approvals.Deny, Priority: 10, Condition: `has(context.flags) && "pii_export" in context.flags`},
	} {
		if _, err := s.SetPolicy(ctx, r, "root"); err != nil {
			t.Fatal(err)
		}
	}
	guard := func(key string, c Context) (Answer, error) {
		return s.Guard(ctx, key, Payload{"refund.card", "acct-1", "refund"}, GuardOptions{Agent: "bot", Context: c})
	}
	tests := []struct {
		key       string
		ctx       Context
		verdict   Verdict
		approvers int
		read      string
	}{
		{"k:small", Context{"amount": 40.0}, Permitted, 0, "context.amount"},
		{"k:mid", Context{"amount": 400.0}, RetryLater, 1, ""},
		{"k:large", Context{"amount": 6000.0}, RetryLater, 2, "context.amount"},
		{"k:pii", Context{"amount": 1.0, "flags": []string{"pii_export"}}, Denied, 0, "context.flags"},
		// No amount: the first threshold fails closed to the most
		// restrictive rule that could still apply, two approvers.
		{"k:none", nil, RetryLater, 2, ""},
	}
	for _, tc := range tests {
		a, err := guard(tc.key, tc.ctx)
		if err != nil || a.Verdict != tc.verdict || tc.approvers > 0 && a.Approvers != tc.approvers {
			t.Fatalf("%s: %+v %v, want %s with %d approvers", tc.key, a, err, tc.verdict, tc.approvers)
		}
		if tc.read != "" && (a.Rule == nil || a.Rule.Read[tc.read] == nil) {
			t.Fatalf("%s: the answer does not say what the rule read: %+v", tc.key, a.Rule)
		}
		d, err := s.Status(ctx, tc.key)
		if err != nil || tc.read != "" && (d.Rule == nil || d.Rule.RuleID == 0 || d.Rule.Read[tc.read] == nil) {
			t.Fatalf("%s: status does not explain the decision: %+v %v", tc.key, d.Rule, err)
		}
		if len(tc.ctx) > 0 && string(d.Context) != string(tc.ctx.Canonical()) {
			t.Fatalf("%s: status context %s", tc.key, d.Context)
		}
	}
	// The same key and payload with a changed context is a conflict that
	// names the field; an identical retry replays.
	_, err := guard("k:mid", Context{"amount": 40.0})
	var ce *ConflictError
	if !errors.As(err, &ce) || strings.Join(ce.Differs, ",") != "context.amount" {
		t.Fatalf("a changed context: %v, want a conflict naming context.amount", err)
	}
	if _, err := guard("k:mid", nil); !errors.As(err, &ce) {
		t.Fatalf("the context dropped: %v, want a conflict", err)
	}
	if a, err := guard("k:mid", Context{"amount": 400.0}); err != nil || !a.Replayed || a.Verdict != RetryLater {
		t.Fatalf("an identical retry: %+v %v", a, err)
	}
	// The decision is the one made at first sight: a rule set later that
	// would allow it changes nothing for the key, and a window that opens
	// later does not either.
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "refund.*", Mode: approvals.Auto, Condition: "context.amount < 1000", Priority: 5}, "root"); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	if a, err := guard("k:mid", Context{"amount": 400.0}); err != nil || a.Verdict != RetryLater || a.PermitID != "" {
		t.Fatalf("after the rules changed: %+v %v, want the first decision", a, err)
	}
	if a, err := guard("k:mid-2", Context{"amount": 400.0}); err != nil || a.Verdict != Permitted {
		t.Fatalf("a new key under the new rule: %+v %v", a, err)
	}
	// policy test answers without writing.
	before, _ := s.Head(ctx)
	r, ex, err := s.PolicyTest(ctx, approvals.Facts{Kind: "refund.card", Context: map[string]any{"amount": 6000.0}})
	after, _ := s.Head(ctx)
	if err != nil || r.Mode != approvals.Approval || r.Approvers != 2 || ex.Read["context.amount"] != 6000.0 || before != after {
		t.Fatalf("policy test: %+v %+v %v (head %v -> %v)", r, ex, err, before, after)
	}
	// A condition that does not compile is refused with its position,
	// and nothing is stored.
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "x", Mode: approvals.Auto, Condition: "context.amount >"}, "root"); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "1:17") {
		t.Fatalf("a bad condition: %v", err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep.Problems, err)
	}
}

// TestContextLimits: bad context is refused with the field named.
func TestContextLimits(t *testing.T) {
	for in, want := range map[string]string{
		`[]`:                "one JSON object",
		`{"Amount": 1}`:     `field "Amount"`,
		`{"a": {"b": 1}}`:   `field "a"`,
		`{"a": null}`:       `field "a"`,
		`{"a": [1]}`:        "strings only",
		`{"a": 1e999}`:      "finite",
		`{"a": 1} {"b": 2}`: "nothing after",
		`{"a": "` + strings.Repeat("x", 1001) + `"}`: "1000 code points",
	} {
		if _, err := ParseContext([]byte(in)); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40s: %v, want %q", in, err, want)
		}
	}
	a, _ := ParseContext([]byte(`{"b": ["x"], "a": 50.0, "due": "2026-12-04T20:00:00Z", "vip": true}`))
	b, _ := ParseContext([]byte(`{"vip": true, "a": 50, "due": "2026-12-04T20:00:00Z", "b": ["x"]}`))
	if a.Digest() != b.Digest() || string(a.Canonical()) != `{"a":50,"b":["x"],"due":"2026-12-04T20:00:00Z","vip":true}` {
		t.Fatalf("canonical: %s / %s", a.Canonical(), b.Canonical())
	}
}

// TestContextFieldNames: a field's name is [a-z][a-z0-9_]{0,63}, at the
// edges of the grammar.
func TestContextFieldNames(t *testing.T) {
	grammar := regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	for _, name := range []string{"", "a", "z", "a9", "a_b", "amount_eur", "A", "_a", "9a", "a-b", "a.b", "aB", "é", "aé", "a ",
		"a" + strings.Repeat("b", 63), "a" + strings.Repeat("b", 64), "a" + strings.Repeat("_", 63), "{", "`", "a/", "a:"} {
		if got, want := contextField(name), grammar.MatchString(name); got != want {
			t.Errorf("contextField(%q) = %v, want %v", name, got, want)
		}
	}
}

package ui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// TestDetailNamesTheRule: the detail pane names the rule that decided a
// key's policy, its version (id), its condition and the values it read,
// and the context the key was guarded with (SPEC 10), all escaped.
func TestDetailNamesTheRule(t *testing.T) {
	f := newFixture(t)
	r, err := f.s.SetPolicy(ctx, approvals.Rule{Pattern: "refund", Mode: approvals.Approval, TTL: time.Hour, Condition: `context.amount > 50.0 && context.note != ""`}, "root")
	if err != nil {
		t.Fatal(err)
	}
	cx, err := ledger.ParseContext([]byte(`{"amount": 75, "note": "a\u001b[2Jb"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Guard(ctx, "refund:big-1", ledger.Payload{Kind: "refund", Target: "acct-7", Body: "75 EUR"}, ledger.GuardOptions{Agent: "refund-bot", Context: cx}); err != nil {
		t.Fatal(err)
	}
	m := f.model(120, 40, nil)
	view := m.View()
	for _, want := range []string{"rule       #" + strconv.FormatInt(r.ID, 10) + " refund if context.amount > 50.0", "read context.amount=75, context.note=a\\x1b[2Jb",
		`context    {"amount":75,"note":"a`} {
		if !strings.Contains(view, want) {
			t.Fatalf("the detail pane lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "\x1b[2J") {
		t.Fatal("the context's escape sequence reached the screen")
	}
}

// TestDetailMarksTheCallersFields: a context field the caller asserted
// (the MCP proxy's --caller-context) is marked as the caller's in the
// detail pane, and a key whose context the transport derived is not.
func TestDetailMarksTheCallersFields(t *testing.T) {
	view := func(context string) string {
		f := newFixture(t)
		if _, err := f.s.SetPolicy(ctx, approvals.Rule{Pattern: "invoice", Mode: approvals.Approval, TTL: time.Hour}, "root"); err != nil {
			t.Fatal(err)
		}
		cx, err := ledger.ParseContext([]byte(context))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Guard(ctx, "invoice:i1", ledger.Payload{Kind: "invoice", Target: "acme", Body: "9 EUR"}, ledger.GuardOptions{Agent: "bot", Context: cx}); err != nil {
			t.Fatal(err)
		}
		return f.model(120, 40, nil).View()
	}
	if v := view(`{"amount": 9, "caller_asserted": ["amount"]}`); !strings.Contains(v, "caller's   amount: asserted by the caller") {
		t.Fatalf("the caller's field is not marked:\n%s", v)
	}
	if v := view(`{"amount": 9}`); strings.Contains(v, "caller's") {
		t.Fatalf("a derived context is marked as the caller's:\n%s", v)
	}
}

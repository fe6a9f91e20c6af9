package approvals

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestActionBody: a condition reads the payload's body when it is one
// JSON object, typed as the database types it (an integral number is an
// int, one beyond int64 fails the condition), and finds it absent when
// the body is text, a list, empty or redacted.
func TestActionBody(t *testing.T) {
	tests := []struct {
		cond, body string
		want       bool
		err        string
	}{
		{"action.body.cents > 100", `{"customer":"acme","cents":900000}`, true, ""},
		{"action.body.cents == 900000", `{"cents": 900000}`, true, ""},
		{"type(action.body.cents) == int", `{"cents": 5e3}`, true, ""},
		{"type(action.body.cents) == double", `{"cents": 50.0}`, true, ""},
		{"type(action.body.cents) == int", `{"cents": 1.5e1}`, true, ""},
		{"type(action.body.cents) == double", `{"cents": 1e-3}`, true, ""},
		{"action.body.cents > 1", `{"cents": 9223372036854775808}`, false, "beyond int64"},
		{"action.body.cents < 0", `{"cents": -9223372036854775808}`, true, ""},
		{"action.body.customer.id == \"c-1\"", `{"customer":{"id":"c-1"}}`, true, ""},
		{`"vip" in action.body.tags`, `{"tags":["a","vip"]}`, true, ""},
		{"has(action.body.cents)", `{"customer":"acme"}`, false, ""},
		{"has(action.body)", `not json`, false, ""},
		{"has(action.body)", `[1, 2]`, false, ""},
		{"has(action.body)", ``, false, ""},
		{"has(action.body)", `{}`, true, ""},
		{"action.body.cents > 1", `{"customer":"acme"}`, false, "did not send: action.body.cents"},
		{"action.body.cents > 1", `"a string body"`, false, "did not send: action.body.cents"},
		{"action.body.cents > 1", `{"cents": 2} trailing`, false, "did not send: action.body.cents"},
	}
	for _, tc := range tests {
		c, err := CompileCondition(tc.cond)
		if err != nil {
			t.Fatalf("%s: %v", tc.cond, err)
		}
		got, _, err := c.Eval(Facts{Kind: "mcp.send_invoice", Body: tc.body, Now: time.Now()})
		if got != tc.want || (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s over %s: %v %v, want %v %q", tc.cond, tc.body, got, err, tc.want, tc.err)
		}
	}
	// What the condition read is kept with the decision.
	c, _ := CompileCondition("action.body.cents > 100 && action.kind.startsWith(\"mcp.\")")
	_, read, _ := c.Eval(Facts{Kind: "mcp.x", Body: `{"cents":150}`})
	if !reflect.DeepEqual(read, map[string]any{"action.body.cents": int64(150), "action.kind": "mcp.x"}) {
		t.Fatalf("read %v", read)
	}
	if _, err := ParseBody(`{"n": 1e400}`); !errors.Is(err, ErrBodyNumber) {
		t.Fatalf("1e400: %v", err)
	}
	// The action's other fields stay typed: a string plus an int is refused when set.
	if _, err := CompileCondition("action.kind + 1 == 2"); err == nil {
		t.Fatal("action.kind + 1 compiled")
	}
	if _, err := CompileCondition("action.nosuch == 1"); err == nil {
		t.Fatal("action.nosuch compiled")
	}
}

// TestFailClosed: the table of a prompt-injected caller. A rule
// that needs approval for large amounts, then auto: a missing figure, a
// figure of the wrong type or a body that is not an object can no
// longer fall through to auto; has() still makes a field optional on
// purpose; and a deny or a higher quorum after the failing rule wins.
func TestFailClosed(t *testing.T) {
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	type want struct {
		mode      Mode
		approvers int
		rule      int64
		failed    int64
	}
	tests := []struct {
		name  string
		rules []Rule
		f     Facts
		want  want
	}{
		{"context missing: approval, not the auto after it",
			[]Rule{{ID: 1, Pattern: "mcp.send_invoice", Mode: Approval, Condition: "context.amount > 100"}, {ID: 2, Pattern: "mcp.*", Mode: Auto}},
			Facts{Kind: "mcp.send_invoice"}, want{Approval, 1, 1, 1}},
		{"context present and small: auto",
			[]Rule{{ID: 1, Pattern: "mcp.send_invoice", Mode: Approval, Condition: "context.amount > 100"}, {ID: 2, Pattern: "mcp.*", Mode: Auto}},
			Facts{Kind: "mcp.send_invoice", Context: map[string]any{"amount": 1.0}}, want{Auto, 1, 2, 0}},
		{"body read: the caller's context cannot move it",
			[]Rule{{ID: 1, Pattern: "mcp.send_invoice", Mode: Approval, Condition: "action.body.cents > 10000"}, {ID: 2, Pattern: "mcp.*", Mode: Auto}},
			Facts{Kind: "mcp.send_invoice", Body: `{"customer":"acme","cents":900000}`, Context: map[string]any{"amount": 1.0}}, want{Approval, 1, 1, 0}},
		{"body without the field: approval",
			[]Rule{{ID: 1, Pattern: "mcp.send_invoice", Mode: Approval, Condition: "action.body.cents > 10000"}, {ID: 2, Pattern: "mcp.*", Mode: Auto}},
			Facts{Kind: "mcp.send_invoice", Body: `{"customer":"acme"}`}, want{Approval, 1, 1, 1}},
		{"an auto rule that fails: the approval after it",
			[]Rule{{ID: 1, Pattern: "pay*", Mode: Auto, Condition: "context.amount <= 50"}, {ID: 2, Pattern: "pay*", Mode: Approval, Approvers: 2, Condition: "context.amount > 5000"}, {ID: 3, Pattern: "pay*", Mode: Approval}},
			Facts{Kind: "pay", Context: map[string]any{"amount": "12"}}, want{Approval, 2, 2, 1}},
		{"a deny anywhere after it wins",
			[]Rule{{ID: 1, Pattern: "pay*", Mode: Auto, Condition: "context.amount <= 50"}, {ID: 2, Pattern: "pay*", Mode: Deny, Condition: `context.region == "x"`}, {ID: 3, Pattern: "pay*", Mode: Auto}},
			Facts{Kind: "pay", Context: map[string]any{"region": "eu"}}, want{Deny, 1, 2, 1}},
		{"only conditions: the default is among the outcomes",
			[]Rule{{ID: 1, Pattern: "pay*", Mode: Auto, Condition: "context.amount <= 50"}},
			Facts{Kind: "pay"}, want{Approval, 1, 0, 1}},
		{"rules after an unconditional rule cannot match",
			[]Rule{{ID: 1, Pattern: "pay*", Mode: Auto, Condition: "context.amount <= 50"}, {ID: 2, Pattern: "pay*", Mode: Auto}, {ID: 3, Pattern: "*", Mode: Deny}},
			Facts{Kind: "pay"}, want{Auto, 1, 1, 1}},
		{"has() makes the field optional: false, the next rule",
			[]Rule{{ID: 1, Pattern: "pay*", Mode: Approval, Condition: "has(context.amount) && context.amount > 100"}, {ID: 2, Pattern: "pay*", Mode: Auto}},
			Facts{Kind: "pay"}, want{Auto, 1, 2, 0}},
		{"a body number beyond int64 fails closed",
			[]Rule{{ID: 1, Pattern: "pay*", Mode: Auto, Condition: "action.body.cents < 100"}, {ID: 2, Pattern: "pay*", Mode: Approval}},
			Facts{Kind: "pay", Body: `{"cents": 99999999999999999999}`}, want{Approval, 1, 2, 1}},
		{"a rule of another kind is no candidate",
			[]Rule{{ID: 1, Pattern: "pay*", Mode: Auto, Condition: "context.amount <= 50"}, {ID: 2, Pattern: "mail", Mode: Deny}, {ID: 3, Pattern: "pay*", Mode: Auto}},
			Facts{Kind: "pay"}, want{Auto, 1, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Now = at
			for _, c := range []bool{true, false} {
				chained = c
				r, ex := Decide(tc.rules, tc.f)
				chained = true
				if r.Mode != tc.want.mode || r.Approvers != tc.want.approvers || ex.RuleID != tc.want.rule || ex.FailedRule != tc.want.failed {
					t.Fatalf("chained %v: %s by %d (%d approvers, failed %d) %q, want %+v", c, r.Mode, ex.RuleID, r.Approvers, ex.FailedRule, ex.Error, tc.want)
				}
				if tc.want.failed != 0 && (!strings.Contains(ex.Error, "failed closed") || ex.Semantics != V2) {
					t.Fatalf("explain %+v", ex)
				}
			}
		})
	}
	// Under the first semantics, which evaluations made before V2
	// record, a missing field was false: verify re-derives them so.
	rules := []Rule{{ID: 1, Pattern: "pay*", Mode: Approval, Condition: "context.amount > 100"}, {ID: 2, Pattern: "pay*", Mode: Auto}}
	if r, ex := DecideUnder(rules, Facts{Kind: "pay"}, V1); r.Mode != Auto || ex.RuleID != 2 {
		t.Fatalf("V1: %s by %d", r.Mode, ex.RuleID)
	}
}

// TestUnguardedFields: policy set warns about each field a condition
// reads without a has() that tests it.
func TestUnguardedFields(t *testing.T) {
	for src, want := range map[string][]string{
		"context.amount > 100":                                      {"context.amount"},
		"has(context.amount) && context.amount > 100":               nil,
		"action.body.cents > 1 && action.kind == \"x\"":             {"action.body.cents"},
		"has(action.body.cents) && action.body.cents > 1":           nil,
		"action.body.customer.id == \"a\" || context.flag":          {"action.body.customer.id", "context.flag"},
		"action.target.startsWith(\"t-\") && now.getHours() > 1":    nil,
		"has(context.a) && context.a > 1 && context.b < 2":          {"context.b"},
		"has(action.body) && size(action.body) > 2":                 nil,
		"has(action.body.x) && has(action.body.y) && action.body.y": {},
	} {
		c, err := CompileCondition(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := c.Unguarded(); len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
}

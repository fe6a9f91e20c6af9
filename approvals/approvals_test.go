package approvals

import (
	"errors"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	rules := []Rule{
		{ID: 1, Pattern: "refund*", Mode: Approval, TTL: time.Hour},
		{ID: 2, Pattern: "refund.small", Mode: Auto},
		{ID: 3, Pattern: "*", Mode: Deny},
		{ID: 4, Pattern: "email.?", Mode: Auto},
		{ID: 5, Pattern: "refund.*", Mode: Deny},
		{ID: 6, Pattern: "report", Mode: Approval}, // no TTL: the default
	}
	tests := []struct {
		kind string
		id   int64
		mode Mode
	}{
		{"refund.small", 2, Auto}, // exact beats every glob
		{"refund.large", 5, Deny}, // refund.* is more specific than refund*
		{"refunds", 1, Approval},  // only refund* and * match
		{"email.x", 4, Auto},      // ? is one character
		{"email.xy", 3, Deny},     // so this falls to *
		{"", 3, Deny},             // * matches the empty kind
		{"report", 6, Approval},
	}
	for _, tc := range tests {
		got := Match(rules, tc.kind)
		if got.ID != tc.id || got.Mode != tc.mode {
			t.Errorf("Match(%q) = rule %d %s, want %d %s", tc.kind, got.ID, got.Mode, tc.id, tc.mode)
		}
	}
	if got := Match(rules[5:], "report"); got.TTL != DefaultTTL {
		t.Errorf("approval rule without TTL got %v", got.TTL)
	}
	if got := Match(nil, "anything"); got.Mode != Approval || got.TTL != DefaultTTL {
		t.Errorf("no rules: %+v", got)
	}
	// A later rule for the same pattern replaces an earlier one.
	if got := Match([]Rule{{ID: 1, Pattern: "x*", Mode: Auto}, {ID: 2, Pattern: "x*", Mode: Deny}}, "xy"); got.ID != 2 {
		t.Errorf("later rule lost: %+v", got)
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		p, s string
		ok   bool
	}{
		{"a*b*c", "aXXbYYc", true}, {"a*b*c", "aXXbYY", false}, {"*", "", true},
		{"??", "é!", true}, {"??", "é", false}, {"a*", "b", false}, {"*a", "bba", true},
	}
	for _, tc := range tests {
		if glob(tc.p, tc.s) != tc.ok {
			t.Errorf("glob(%q, %q) != %v", tc.p, tc.s, tc.ok)
		}
	}
}

func TestCheckDecision(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	open := Request{Exists: true, Agent: "bot", Expires: now.Add(time.Minute)}
	tests := []struct {
		name    string
		req     Request
		op      string
		approve bool
		reason  string
		want    error
	}{
		{"approve", open, "alice", true, "", nil},
		{"reject", open, "alice", false, "too big", nil},
		{"self reject allowed", open, "bot", false, "changed my mind", nil},
		{"no request", Request{}, "alice", true, "", ErrNoRequest},
		{"twice", Request{Exists: true, Agent: "bot", Expires: now.Add(time.Minute), Decided: "approved"}, "alice", false, "x", ErrAlreadyDecided},
		{"expired", Request{Exists: true, Agent: "bot", Expires: now}, "alice", true, "", ErrExpired},
		{"self approval", open, "bot", true, "", ErrSelfApproval},
		{"reject without reason", open, "alice", false, "  ", ErrReasonRequired},
	}
	for _, tc := range tests {
		err := CheckDecision(tc.req, tc.op, tc.approve, tc.reason, now)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestParseModeAndPattern(t *testing.T) {
	for _, m := range []string{"auto", "approval", "deny"} {
		if _, err := ParseMode(m); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseMode("maybe"); err == nil {
		t.Error("accepted mode maybe")
	}
	if ValidatePattern("") == nil || ValidatePattern("a\x1bb") == nil || ValidatePattern("refund.*") != nil {
		t.Error("pattern validation")
	}
}

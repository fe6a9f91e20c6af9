package mcpgate

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

var approveCmd = regexp.MustCompile("`tollgate approve ([^`]*)`")

// TestAnswersSayWhatToDo: a pending answer names the operator's exact
// approve command, and the command works as written; denied, uncertain
// and settled answers say what to do next; a key that could act on a
// terminal is escaped in every one of them.
func TestAnswersSayWhatToDo(t *testing.T) {
	e := newEnv(t)
	e.policy("refund", approvals.Approval)
	cs := connect(t, NewServer(e.store, ServeOptions{}))
	args := map[string]any{"key": "refund:what-next", "kind": "refund", "target": "acct-7", "body": "40 EUR"}
	m := approveCmd.FindStringSubmatch(text(call(t, cs, "guard", args)))
	if m == nil || m[1] != "refund:what-next" {
		t.Fatalf("the pending answer names no approve command: %q", m)
	}
	if _, err := e.store.Approve(ctx, m[1], "alice", ""); err != nil {
		t.Fatalf("the command's key: %v", err)
	}
	if res := call(t, cs, "guard", args); !strings.Contains(text(res), "PERMITTED") {
		t.Fatalf("after the named command: %s", text(res))
	}

	args["key"] = "refund:refused"
	call(t, cs, "guard", args)
	if _, err := e.store.Reject(ctx, "refund:refused", "alice", "duplicate"); err != nil {
		t.Fatal(err)
	}
	if got := text(call(t, cs, "guard", args)); !strings.Contains(got, "DENIED") || !strings.Contains(got, "new key") ||
		!strings.Contains(got, "Call status with key refund:refused") {
		t.Fatalf("a rejected key: %s", got)
	}

	bad := "k\x1b]0;owned\x07"
	for _, a := range []ledger.Answer{
		{Key: bad, Verdict: ledger.RetryLater, State: ledger.StatePending, ExpiresAt: time.Now()},
		{Key: bad, Verdict: ledger.Denied, State: ledger.StateDenied, Reason: "denied by policy \x1b[2J"},
		{Key: bad, Verdict: ledger.Uncertain, State: ledger.StateUncertain},
		{Key: bad, Verdict: ledger.Settled, State: ledger.StateFailed, SafeNewKey: true},
		{Key: bad, Verdict: ledger.Settled, State: ledger.StateSucceeded},
	} {
		got := advice(a, retryCall)
		if strings.ContainsAny(got, "\x1b\x07") {
			t.Fatalf("%s: a raw control character: %q", a.Verdict, got)
		}
		want := map[ledger.Verdict][]string{
			ledger.RetryLater: {"`tollgate approve k\\x1b]0;owned\\x07`", "`tollgate reject k\\x1b]0;owned\\x07 --reason ...`"},
			ledger.Denied:     {"tell whoever asked", "`tollgate status k\\x1b]0;owned\\x07`"},
			ledger.Uncertain:  {"`tollgate reconcile k\\x1b]0;owned\\x07 --result executed|not-executed --note ...`", "Check whether it took effect"},
			ledger.Settled:    {"do not execute it again", "`tollgate status k\\x1b]0;owned\\x07`"},
		}[a.Verdict]
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Fatalf("%s answer %q lacks %q", a.Verdict, got, w)
			}
		}
		if a.Verdict == ledger.Settled && strings.Contains(got, "new key") != a.SafeNewKey {
			t.Fatalf("settled %s: %q", a.State, got)
		}
	}
}

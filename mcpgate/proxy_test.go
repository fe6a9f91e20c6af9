package mcpgate

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// syncBuffer is a log the proxy's goroutines write while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// recorded counts the actions of kind in the ledger.
func (e *env) recorded(kind string) int {
	e.t.Helper()
	items, err := e.store.List(ctx, ledger.Filter{Kind: kind})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(items)
}

// liveSession is the proxy's upstream session as it is now.
func (p *Proxy) liveSession() *mcp.ClientSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.session
}

// permit is a permit for send_email to the address, issued as the proxy
// would, for a test that forwards it itself.
func (e *env) permit(key, to string) ledger.Answer {
	e.t.Helper()
	a, err := e.store.Guard(ctx, key, ledger.Payload{Kind: "mcp.send_email", Target: "mailer", Body: `{"to":"` + to + `"}`}, ledger.GuardOptions{Lease: time.Hour})
	if err != nil || a.Verdict != ledger.Permitted {
		e.t.Fatalf("guard %s: %+v %v", key, a, err)
	}
	return a
}

// TestProxyRestartsUpstream: after the upstream exits, the proxy starts
// it again, and a call made at once waits for it and runs, where one
// crash used to make every later call UNAVAILABLE.
func TestProxyRestartsUpstream(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{RestartDelay: 50 * time.Millisecond})
	if res := call(t, cs, "crash", map[string]any{KeyArgument: "crash:restart"}); !strings.Contains(text(res), "UNKNOWN") {
		t.Fatalf("the crash: %s", text(res))
	}
	res := call(t, cs, "send_email", map[string]any{"to": "after@example.com"})
	if res.IsError || text(res) != "sent to after@example.com" {
		t.Fatalf("a call after the crash: %s", text(res))
	}
	if n := e.executions("start"); n != 2 {
		t.Fatalf("the upstream started %d times, want 2", n)
	}
}

// TestProxyDownRecordsNothing: while the upstream cannot start, a call
// waits (bounded by Wait) and is refused with nothing recorded; once it
// can start again, the next restart brings it back and calls run.
func TestProxyDownRecordsNothing(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{RestartDelay: 20 * time.Millisecond, Restarts: 50, Wait: 300 * time.Millisecond})
	os.WriteFile(e.down, nil, 0o600)
	call(t, cs, "crash", map[string]any{KeyArgument: "crash:down"})
	start := time.Now()
	res := call(t, cs, "send_email", map[string]any{"to": "down@example.com"})
	if !strings.Contains(text(res), "UNAVAILABLE") || !strings.Contains(text(res), "nothing was recorded") || !strings.Contains(text(res), "Repeat this exact call") {
		t.Fatalf("a call while the upstream is down: %s", text(res))
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 10*time.Second {
		t.Fatalf("the call waited %v, want about Wait (300ms)", d)
	}
	if n := e.recorded("mcp.send_email"); n != 0 {
		t.Fatalf("a call while the upstream was down was recorded (%d)", n)
	}
	os.Remove(e.down)
	deadline := time.Now().Add(15 * time.Second)
	for {
		res := call(t, cs, "send_email", map[string]any{"to": "back@example.com"})
		if !res.IsError {
			break
		}
		if !strings.Contains(text(res), "UNAVAILABLE") || time.Now().After(deadline) {
			t.Fatalf("the upstream did not come back: %s", text(res))
		}
	}
	if n, m := e.executions("send_email"), e.recorded("mcp.send_email"); n != 1 || m != 1 {
		t.Fatalf("%d executions and %d actions, want one of each", n, m)
	}
}

// TestProxyGivesUpRestarting: restarts are bounded; once they are spent
// a call is refused at once, and a permit issued just before (a call
// that never left) is reported failed as not forwarded, never unknown.
func TestProxyGivesUpRestarting(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	var log syncBuffer
	p, cs := e.proxy(ProxyOptions{RestartDelay: 10 * time.Millisecond, Restarts: 2, Log: &log})
	old := p.liveSession()
	os.WriteFile(e.down, nil, 0o600)
	call(t, cs, "crash", map[string]any{KeyArgument: "crash:give-up"})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "no more restarts") {
		if time.Now().After(deadline) {
			t.Fatalf("the proxy never gave up:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	res := call(t, cs, "send_email", map[string]any{"to": "late@example.com"})
	if !strings.Contains(text(res), "UNAVAILABLE") || !strings.Contains(text(res), "Restart the proxy") || time.Since(start) > 5*time.Second {
		t.Fatalf("after giving up: %s (%v)", text(res), time.Since(start))
	}
	if n := e.executions("start"); n != 1 {
		t.Fatalf("%d starts", n)
	}

	res = p.forward(ctx, old, "send_email", map[string]any{"to": "x@example.com"}, e.permit("mail:never-sent", "x@example.com"), actionMeta{})
	if !strings.Contains(text(res), "NOT FORWARDED") {
		t.Fatalf("a permitted call to a gone upstream: %s", text(res))
	}
	d, _ := e.store.Status(ctx, "mail:never-sent")
	if d.State != ledger.StateFailed || len(d.Reports) != 1 || d.Reports[0].Ref != "not-forwarded" {
		t.Fatalf("the call never sent: %s %+v", d.State, d.Reports)
	}
}

// TestProxyPermittedCallWaitsForRestart: a call that got its permit
// just as the upstream exited waits for the restart as long as its lease
// leaves room for the call, not only the Wait a call without a permit
// has: it runs once, where it used to be given up as not forwarded,
// which used its key up.
func TestProxyPermittedCallWaitsForRestart(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	p, cs := e.proxy(ProxyOptions{RestartDelay: 20 * time.Millisecond, Restarts: 50, Wait: 200 * time.Millisecond, Timeout: 5 * time.Second})
	old := p.liveSession()
	os.WriteFile(e.down, nil, 0o600)
	call(t, cs, "crash", map[string]any{KeyArgument: "crash:restarting"})
	back := time.AfterFunc(time.Second, func() { os.Remove(e.down) })
	defer back.Stop()
	res := p.forward(ctx, old, "send_email", map[string]any{"to": "w@example.com"}, e.permit("mail:waits", "w@example.com"), actionMeta{})
	if res.IsError || text(res) != "sent to w@example.com" {
		t.Fatalf("a permitted call while the upstream restarts: %s", text(res))
	}
	if d, _ := e.store.Status(ctx, "mail:waits"); d.State != ledger.StateSucceeded || e.executions("send_email") != 1 {
		t.Fatalf("state %s, %d executions", d.State, e.executions("send_email"))
	}
}

// TestProxyForwardsAfterRestart: a permit issued for a session that ended
// before the call was written is used on the restarted upstream: the
// call had not left, so this is its first and only run.
func TestProxyForwardsAfterRestart(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	p, cs := e.proxy(ProxyOptions{RestartDelay: 20 * time.Millisecond})
	old := p.liveSession()
	call(t, cs, "crash", map[string]any{KeyArgument: "crash:stale"})
	if res := p.forward(ctx, old, "send_email", map[string]any{"to": "s@example.com"}, e.permit("mail:stale-session", "s@example.com"), actionMeta{}); res.IsError || text(res) != "sent to s@example.com" {
		t.Fatalf("the permitted call after the restart: %s", text(res))
	}
	if d, _ := e.store.Status(ctx, "mail:stale-session"); d.State != ledger.StateSucceeded || e.executions("send_email") != 1 {
		t.Fatalf("state %s, %d executions", d.State, e.executions("send_email"))
	}
}

// TestProxyReadsPass: a tool the upstream marks read-only passes
// unguarded by default (no approval, no key, nothing recorded, every call
// runs); --guard-reads guards it like any other.
func TestProxyReadsPass(t *testing.T) {
	e := newEnv(t) // no policy: a kind with no rule needs approval
	_, cs := e.proxy(ProxyOptions{})
	for i := 0; i < 2; i++ {
		if res := call(t, cs, "lookup", map[string]any{"to": "ops"}); res.IsError || text(res) != "mailbox ops" {
			t.Fatalf("read %d: %s", i, text(res))
		}
	}
	if n, m := e.executions("lookup"), e.recorded("mcp.lookup"); n != 2 || m != 0 {
		t.Fatalf("reads: %d executions, %d recorded; want 2 and 0", n, m)
	}
	if res := call(t, cs, "send_email", map[string]any{"to": "ops"}); !strings.Contains(text(res), "PENDING") {
		t.Fatalf("a write with no rule: %s", text(res))
	}

	_, guarded := e.proxy(ProxyOptions{GuardReads: true})
	if res := call(t, guarded, "lookup", map[string]any{"to": "ops"}); !strings.Contains(text(res), "PENDING") {
		t.Fatalf("a read under GuardReads: %s", text(res))
	}
	if n, m := e.executions("lookup"), e.recorded("mcp.lookup"); n != 2 || m != 1 {
		t.Fatalf("a guarded read: %d executions, %d recorded", n, m)
	}
}

// TestProxyValidatesBeforeGuard: arguments the upstream tool's schema
// rejects are refused before guard and leave no key used; a -32602 that
// still comes back from the upstream is reported failed (ref
// invalid-params), not unknown.
func TestProxyValidatesBeforeGuard(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{})
	for name, c := range map[string]struct {
		tool string
		args map[string]any
	}{
		"wrong type":       {"send_email", map[string]any{"to": 5, KeyArgument: "mail:shape"}},
		"missing required": {"charge", map[string]any{"idem": "x"}},
	} {
		res := call(t, cs, c.tool, c.args)
		if !strings.Contains(text(res), "REFUSED before guard") || !strings.Contains(text(res), "input schema") {
			t.Fatalf("%s: %s", name, text(res))
		}
	}
	if items, _ := e.store.List(ctx, ledger.Filter{}); len(items) != 0 || e.executions("send_email")+e.executions("charge") != 0 {
		t.Fatalf("calls of the wrong shape left %d actions", len(items))
	}
	// The same key with the right shape is a first call.
	if res := call(t, cs, "send_email", map[string]any{"to": "a@example.com", KeyArgument: "mail:shape"}); res.IsError {
		t.Fatalf("the corrected call: %s", text(res))
	}

	res := call(t, cs, "strict_email", map[string]any{"to": "nobody", KeyArgument: "mail:strict"})
	if !res.IsError || !strings.Contains(text(res), "-32602") || !strings.Contains(text(res), "did not run") {
		t.Fatalf("an invalid-params rejection: %s", text(res))
	}
	d, _ := e.store.Status(ctx, "mail:strict")
	if d.State != ledger.StateFailed || len(d.Reports) != 1 || d.Reports[0].Ref != "invalid-params" {
		t.Fatalf("after -32602: %s %+v", d.State, d.Reports)
	}
}

// TestProxyPassesKeyDownstream: the action's key goes to the upstream in
// _meta, and with KeyArg as that argument of the tools that take it,
// which the offered schema then no longer requires of the caller.
func TestProxyPassesKeyDownstream(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	_, plain := e.proxy(ProxyOptions{})
	if res := call(t, plain, "charge", map[string]any{"amount": 5, "idem": "theirs", KeyArgument: "pay:1"}); text(res) != "charged 5; meta pay:1; idem theirs" {
		t.Fatalf("without KeyArg: %s", text(res))
	}

	_, cs := e.proxy(ProxyOptions{KeyArg: "idem"})
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "charge" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Required   []string
			Properties map[string]struct{ Description string }
		}
		json.Unmarshal(b, &s)
		if strings.Contains(strings.Join(s.Required, ","), "idem") || !strings.HasPrefix(s.Properties["idem"].Description, "Set by tollgate") {
			t.Fatalf("charge's offered schema: %s", b)
		}
	}
	if res := call(t, cs, "charge", map[string]any{"amount": 7, KeyArgument: "pay:2"}); text(res) != "charged 7; meta pay:2; idem pay:2" {
		t.Fatalf("with KeyArg: %s", text(res))
	}
	res := call(t, cs, "charge", map[string]any{"amount": 8})
	if !strings.Contains(text(res), "meta mcp:charge:") || !strings.Contains(text(res), "idem mcp:charge:") {
		t.Fatalf("a derived key: %s", text(res))
	}
	if res := call(t, cs, "charge", map[string]any{"amount": 9, "idem": "mine", KeyArgument: "pay:3"}); !strings.Contains(text(res), "REFUSED before guard") {
		t.Fatalf("a caller's own value for the key argument: %s", text(res))
	}
	if n := e.executions("charge"); n != 3 {
		t.Fatalf("charge ran %d times, want 3", n)
	}
}

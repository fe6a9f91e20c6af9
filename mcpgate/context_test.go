package mcpgate

import (
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestProxyPassesContext: a proxied call's tollgate_context reaches the
// policy (a CEL rule over context.amount decides), is bound to the key (a
// retry with another context is a conflict) and is never forwarded; bad
// context is refused before guard, naming the field.
func TestProxyPassesContext(t *testing.T) {
	e := newEnv(t)
	if _, err := e.store.SetPolicy(ctx, approvals.Rule{Pattern: "mcp.send_email", Mode: approvals.Auto, Condition: "context.amount <= 50.0"}, "alice"); err != nil {
		t.Fatal(err)
	}
	_, cs := e.proxy(ProxyOptions{})
	small := call(t, cs, "send_email", map[string]any{"to": "a@example.com", "idempotency_key": "mail:small",
		ContextArgument: map[string]any{"amount": 20, "flags": []string{"vip"}}})
	if small.IsError || e.executions("send_email") != 1 {
		t.Fatalf("a call whose context the auto rule allows: %s", text(small))
	}
	d, err := e.store.Status(ctx, "mail:small")
	if err != nil || d.Rule == nil || d.Rule.Condition == "" || string(d.Context) == "" || strings.Contains(d.Payload.Body, ContextArgument) {
		t.Fatalf("status of the call: %v rule %+v context %s body %q", err, d.Rule, d.Context, d.Payload.Body)
	}
	large := call(t, cs, "send_email", map[string]any{"to": "b@example.com", "idempotency_key": "mail:large",
		ContextArgument: map[string]any{"amount": 900}})
	if !large.IsError || !strings.Contains(text(large), "PENDING") || e.executions("send_email") != 1 {
		t.Fatalf("a call the rule does not allow: %s", text(large))
	}
	changed := call(t, cs, "send_email", map[string]any{"to": "a@example.com", "idempotency_key": "mail:small",
		ContextArgument: map[string]any{"amount": 21, "flags": []string{"vip"}}})
	if !changed.IsError || !strings.Contains(text(changed), "amount") || e.executions("send_email") != 1 {
		t.Fatalf("the same key with another context: %s", text(changed))
	}
	for _, bad := range []map[string]any{{"amount": map[string]any{"deep": map[string]any{"er": 1}}}, {PredecessorField: "mail:x"}} {
		r := call(t, cs, "send_email", map[string]any{"to": "c@example.com", ContextArgument: bad})
		if !r.IsError || !strings.Contains(text(r), "REFUSED before guard") || !strings.Contains(text(r), ContextArgument) {
			t.Fatalf("bad context %v: %s", bad, text(r))
		}
	}
}

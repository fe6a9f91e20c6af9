package mcpgate

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
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
	_, cs := e.proxy(ProxyOptions{CallerContext: []string{"amount", "flags"}})
	small := call(t, cs, "send_email", map[string]any{"to": "a@example.com", "idempotency_key": "mail:small",
		ContextArgument: map[string]any{"amount": 20, "flags": []string{"vip"}}})
	if small.IsError || e.executions("send_email") != 1 {
		t.Fatalf("a call whose context the auto rule allows: %s", text(small))
	}
	d, err := e.store.Status(ctx, "mail:small")
	if err != nil || d.Rule == nil || d.Rule.Condition == "" || string(d.Context) == "" || strings.Contains(d.Payload.Body, ContextArgument) ||
		strings.Join(d.CallerAsserted, ",") != "amount,flags" {
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
	for _, bad := range []map[string]any{{"amount": map[string]any{"deep": map[string]any{"er": 1}}}, {PredecessorField: "mail:x"},
		{"region": "eu"}, {ledger.CallerAssertedField: []string{}}} {
		r := call(t, cs, "send_email", map[string]any{"to": "c@example.com", ContextArgument: bad})
		if !r.IsError || !strings.Contains(text(r), "REFUSED before guard") || !strings.Contains(text(r), ContextArgument) {
			t.Fatalf("bad context %v: %s", bad, text(r))
		}
	}
}

// TestProxyDerivesTheContext is issue 40's table, played by a model
// behind the proxy with the official SDK's client, in front of a real
// upstream: the operator's rules put send_invoice under approval when
// context.amount > 100, otherwise auto. The model can no longer choose
// the amount: a context it sends is refused unless the operator opted
// into the field; no context at all fails closed to approval; with the
// proxy's mapping from the arguments (--context amount=args.cents /
// 100.0) the arguments that execute decide; a field the operator did
// accept from the caller is marked as the caller's, and a rule on
// action.body is not moved by it.
func TestProxyDerivesTheContext(t *testing.T) {
	rules := func(e *env) {
		for _, r := range []approvals.Rule{
			{Pattern: "mcp.send_invoice", Mode: approvals.Approval, TTL: time.Hour, Condition: "context.amount > 100"},
			{Pattern: "mcp.send_invoice", Mode: approvals.Auto},
		} {
			if _, err := e.store.SetPolicy(ctx, r, "alice"); err != nil {
				t.Fatal(err)
			}
		}
	}
	invoice := func(cents int, context map[string]any) map[string]any {
		args := map[string]any{"customer": "acme", "cents": cents}
		if context != nil {
			args[ContextArgument] = context
		}
		return args
	}
	advertised := func(cs *mcp.ClientSession) map[string]any {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			if tool.Name == "send_invoice" {
				b, _ := json.Marshal(tool.InputSchema)
				var schema map[string]any
				json.Unmarshal(b, &schema)
				props, _ := schema["properties"].(map[string]any)
				return props
			}
		}
		t.Fatal("send_invoice is not offered")
		return nil
	}

	t.Run("the model's context", func(t *testing.T) {
		e := newEnv(t)
		rules(e)
		_, cs := e.proxy(ProxyOptions{})
		if _, ok := advertised(cs)[ContextArgument]; ok {
			t.Fatalf("the proxy advertises %s without --caller-context", ContextArgument)
		}
		for _, c := range []map[string]any{{"amount": 9000}, {"amount": 1}} {
			res := call(t, cs, "send_invoice", invoice(900000, c))
			if !res.IsError || !strings.Contains(text(res), ContextArgument+" is not accepted") {
				t.Fatalf("a context sent by the model %v: %s", c, text(res))
			}
		}
		res := call(t, cs, "send_invoice", invoice(900000, nil))
		if !res.IsError || !strings.Contains(text(res), "PENDING") {
			t.Fatalf("no context at all: %s", text(res))
		}
		if n := e.executions("send_invoice"); n != 0 {
			t.Fatalf("the invoice was sent %d times", n)
		}
	})

	t.Run("derived from the arguments", func(t *testing.T) {
		e := newEnv(t)
		rules(e)
		m, err := approvals.CompileMapping("amount=args.cents / 100.0", ledger.ContextFieldName)
		if err != nil {
			t.Fatal(err)
		}
		_, cs := e.proxy(ProxyOptions{Context: []*approvals.Mapping{m}})
		if res := call(t, cs, "send_invoice", invoice(900000, map[string]any{"amount": 1})); !res.IsError || !strings.Contains(text(res), "not accepted") {
			t.Fatalf("the model's amount beside the mapping: %s", text(res))
		}
		if res := call(t, cs, "send_invoice", invoice(900000, nil)); !res.IsError || !strings.Contains(text(res), "PENDING") {
			t.Fatalf("9,000.00 by the arguments: %s", text(res))
		}
		if n := e.executions("send_invoice"); n != 0 {
			t.Fatalf("the large invoice was sent (%d)", n)
		}
		if res := call(t, cs, "send_invoice", invoice(5000, nil)); res.IsError || text(res) != "invoiced acme 5000" {
			t.Fatalf("50.00 by the arguments: %s", text(res))
		}
		if n := e.executions("send_invoice"); n != 1 {
			t.Fatalf("the small invoice was sent %d times", n)
		}
	})

	t.Run("a field the operator accepts from the caller", func(t *testing.T) {
		e := newEnv(t)
		rules(e)
		if _, err := e.store.SetPolicy(ctx, approvals.Rule{Pattern: "mcp.send_invoice", Mode: approvals.Approval, TTL: time.Hour, Priority: 1,
			Condition: "action.body.cents > 10000"}, "alice"); err != nil {
			t.Fatal(err)
		}
		_, cs := e.proxy(ProxyOptions{CallerContext: []string{"amount"}})
		schema, _ := advertised(cs)[ContextArgument].(map[string]any)
		if fields, _ := schema["properties"].(map[string]any); len(fields) != 1 || fields["amount"] == nil {
			t.Fatalf("the advertised context: %v", schema)
		}
		res := call(t, cs, "send_invoice", invoice(900000, map[string]any{"amount": 1}))
		if !res.IsError || !strings.Contains(text(res), "PENDING") || e.executions("send_invoice") != 0 {
			t.Fatalf("the caller's amount against a rule on the body: %s", text(res))
		}
		if res := call(t, cs, "send_invoice", invoice(900000, map[string]any{"risk": "low"})); !res.IsError || !strings.Contains(text(res), `"risk"`) {
			t.Fatalf("a field the operator did not accept: %s", text(res))
		}
		items, err := e.store.List(ctx, ledger.Filter{Kind: "mcp.send_invoice"})
		if err != nil || len(items) != 1 {
			t.Fatalf("%d actions, %v", len(items), err)
		}
		d, err := e.store.Status(ctx, items[0].Key)
		if err != nil || strings.Join(d.CallerAsserted, ",") != "amount" {
			t.Fatalf("status does not mark the caller's field: %+v %v", d.CallerAsserted, err)
		}
	})
}

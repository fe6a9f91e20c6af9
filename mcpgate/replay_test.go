package mcpgate

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// actionOf is the proxy's _meta entry of an answer, decoded.
func actionOf(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, _ := json.Marshal(res.Meta[MetaAction])
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		t.Fatalf("no %s in the answer's _meta: %s", MetaAction, b)
	}
	return m
}

// accepted is the accepted report of key.
func (e *env) accepted(key string) ledger.ReportRow {
	e.t.Helper()
	d, err := e.store.Status(ctx, key)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range d.Reports {
		if r.Kind == "accepted" {
			return r
		}
	}
	e.t.Fatalf("%s has no accepted report: %+v", key, d.Reports)
	return ledger.ReportRow{}
}

// TestProxyReplaysResults: an identical retry of a settled call is given
// the result the call returned (succeeded, a tool error, structured
// output, a -32602 refusal alike), marked as a replay in _meta and by a
// closing line, and the upstream is not called again; the stored result
// is the upstream's own, without the proxy's _meta.
func TestProxyReplaysResults(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{})

	first := call(t, cs, "send_email", map[string]any{"to": "a@example.com", KeyArgument: "mail:replay"})
	if m := actionOf(t, first); first.IsError || text(first) != "sent to a@example.com" || m["replayed"] != false || m["result_stored"] != true || m["key"] != "mail:replay" || m["state"] != "succeeded" {
		t.Fatalf("the first call: %s %v", text(first), m)
	}
	if r := e.accepted("mail:replay").Result; strings.Contains(r, MetaAction) || !strings.Contains(r, "sent to a@example.com") {
		t.Fatalf("the stored result: %s", r)
	}
	for i := 0; i < 2; i++ {
		res := call(t, cs, "send_email", map[string]any{"to": "a@example.com", KeyArgument: "mail:replay"})
		m := actionOf(t, res)
		if res.IsError || firstText(res) != "sent to a@example.com" || m["replayed"] != true || m["key"] != "mail:replay" || m["state"] != "succeeded" {
			t.Fatalf("retry %d: %s %v", i, text(res), m)
		}
		if len(res.Content) != 2 || !strings.HasPrefix(text(res), "sent to a@example.com\nREPLAYED by tollgate: this is the stored result of mail:replay, which ended succeeded at ") {
			t.Fatalf("retry %d is not marked as a replay: %q", i, text(res))
		}
	}

	// A tool error is a failed call: its retry is given the same error.
	if res := call(t, cs, "reject_email", map[string]any{"to": "b@example.com"}); !res.IsError || firstText(res) != "mailbox full" {
		t.Fatalf("a tool error: %s", text(res))
	}
	res := call(t, cs, "reject_email", map[string]any{"to": "b@example.com"})
	if !res.IsError || firstText(res) != "mailbox full" || actionOf(t, res)["replayed"] != true || actionOf(t, res)["state"] != "failed" {
		t.Fatalf("the retry of a failed call: %s %v", text(res), actionOf(t, res))
	}

	// Structured output comes back as it was.
	first = call(t, cs, "create_issue", map[string]any{"subject": "printer on fire"})
	again := call(t, cs, "create_issue", map[string]any{"subject": "printer on fire"})
	if s := structured(t, again); first.IsError || s["number"] != float64(12) || s["title"] != "printer on fire" || firstText(again) != firstText(first) || actionOf(t, again)["replayed"] != true {
		t.Fatalf("structured output: %s / %s %v", text(first), text(again), s)
	}

	// The proxy's own answer to a call the upstream refused as invalid
	// is what its retry is given.
	first = call(t, cs, "strict_email", map[string]any{"to": "nobody"})
	again = call(t, cs, "strict_email", map[string]any{"to": "nobody"})
	if !again.IsError || firstText(again) != firstText(first) || !strings.Contains(firstText(again), "-32602") || actionOf(t, again)["replayed"] != true {
		t.Fatalf("an invalid-params refusal repeated: %s", text(again))
	}

	if a, b, c := e.executions("send_email"), e.executions("reject_email"), e.executions("create_issue"); a != 1 || b != 1 || c != 1 {
		t.Fatalf("executions: send_email %d, reject_email %d, create_issue %d; want one each", a, b, c)
	}
}

// TestProxyReplaysNoResultItHasNot: where no result was stored (a
// redacting proxy, a result over ledger.MaxResultLen, a report without
// one), the first answer says so and a retry is answered SETTLED with
// the reason; nothing runs again.
func TestProxyReplaysNoResultItHasNot(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	var log syncBuffer
	_, redacting := e.proxy(ProxyOptions{Redact: true})
	first := call(t, redacting, "send_email", map[string]any{"to": "secret@example.com", KeyArgument: "mail:redacted"})
	if m := actionOf(t, first); first.IsError || m["result_stored"] != false || !strings.Contains(m["result_not_stored"].(string), "redact") {
		t.Fatalf("a redacted call: %s %v", text(first), m)
	}
	res := call(t, redacting, "send_email", map[string]any{"to": "secret@example.com", KeyArgument: "mail:redacted"})
	if !res.IsError || !strings.Contains(text(res), "SETTLED") || !strings.Contains(text(res), "redacted") || strings.Contains(text(res), "secret") || actionOf(t, res)["replayed"] != true {
		t.Fatalf("the retry of a redacted call: %s", text(res))
	}
	if d, _ := e.store.Status(ctx, "mail:redacted"); !d.Redacted || e.accepted("mail:redacted").Result != "" {
		t.Fatalf("a redacted call kept its arguments or result: %+v", d)
	}

	_, cs := e.proxy(ProxyOptions{Log: &log})
	first = call(t, cs, "export_all", map[string]any{KeyArgument: "export:big"})
	if m := actionOf(t, first); first.IsError || m["result_stored"] != false || !strings.Contains(m["result_not_stored"].(string), "bytes") {
		t.Fatalf("a result over the bound: %v", m)
	}
	if !strings.Contains(log.String(), "the result of export:big is") || e.accepted("export:big").Result != "" {
		t.Fatalf("a result over the bound was stored, or not logged: %s", log.String())
	}
	res = call(t, cs, "export_all", map[string]any{KeyArgument: "export:big"})
	if !res.IsError || !strings.Contains(text(res), "SETTLED: export:big already ended succeeded") || !strings.Contains(text(res), "none was stored") {
		t.Fatalf("the retry of a call whose result was too big: %s", text(res))
	}

	// A report that kept no result (an older proxy's).
	a := e.permit("mail:older", "old@example.com")
	if _, err := e.store.Report(ctx, a.Key, a.PermitID, ledger.Succeeded, ledger.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	res = call(t, cs, "send_email", map[string]any{"to": "old@example.com", KeyArgument: "mail:older"})
	if !res.IsError || !strings.Contains(text(res), "SETTLED") || !strings.Contains(text(res), "none was stored") {
		t.Fatalf("the retry of a call reported without a result: %s", text(res))
	}
	if n, m := e.executions("send_email"), e.executions("export_all"); n != 1 || m != 1 {
		t.Fatalf("send_email ran %d times, export_all %d; want once each", n, m)
	}
}

// TestProxyRepeatWindow: a key derived from the arguments lasts for the
// repeat window: within it an identical call is a retry (replayed); once
// the key has ended and the window has passed, an identical call is a
// new action under the next key of the chain, which names its
// predecessor in its context and its answer. A key that has not ended
// (uncertain) stays, and an explicit idempotency_key never expires.
func TestProxyRepeatWindow(t *testing.T) {
	var skew atomic.Int64
	e := openEnv(t, func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	later := func(d time.Duration) { skew.Add(int64(d)) }
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{RepeatWindow: 24 * time.Hour})
	args := map[string]any{"to": "team@example.com", "subject": "weekly"}

	first := call(t, cs, "send_email", args)
	k1, _ := actionOf(t, first)["key"].(string)
	if first.IsError || !strings.HasPrefix(k1, "mcp:send-email:") {
		t.Fatalf("the first call: %s %v", text(first), actionOf(t, first))
	}
	later(23 * time.Hour)
	if res := call(t, cs, "send_email", args); actionOf(t, res)["replayed"] != true || actionOf(t, res)["key"] != k1 {
		t.Fatalf("within the window: %s %v", text(res), actionOf(t, res))
	}
	later(2 * time.Hour)
	res := call(t, cs, "send_email", args)
	m := actionOf(t, res)
	if res.IsError || text(res) != "sent to team@example.com" || m["replayed"] != false || m["key"] != k1+"-r2" || m["predecessor"] != k1 {
		t.Fatalf("after the window: %s %v", text(res), m)
	}
	d, err := e.store.Status(ctx, k1+"-r2")
	if err != nil || !strings.Contains(string(d.Context), `"predecessor":"`+k1+`"`) {
		t.Fatalf("the new key's context: %s %v", d.Context, err)
	}
	if res := call(t, cs, "send_email", args); actionOf(t, res)["replayed"] != true || actionOf(t, res)["key"] != k1+"-r2" || actionOf(t, res)["predecessor"] != k1 {
		t.Fatalf("a retry of the new action: %s %v", text(res), actionOf(t, res))
	}
	later(25 * time.Hour)
	if res := call(t, cs, "send_email", args); res.IsError || actionOf(t, res)["key"] != k1+"-r3" || actionOf(t, res)["predecessor"] != k1+"-r2" {
		t.Fatalf("a third time: %s %v", text(res), actionOf(t, res))
	}
	if n := e.executions("send_email"); n != 3 {
		t.Fatalf("send_email ran %d times, want 3 (one per window)", n)
	}

	// An explicit key never expires.
	call(t, cs, "send_email", map[string]any{"to": "x@example.com", KeyArgument: "mail:explicit"})
	later(100 * time.Hour)
	if res := call(t, cs, "send_email", map[string]any{"to": "x@example.com", KeyArgument: "mail:explicit"}); actionOf(t, res)["replayed"] != true || actionOf(t, res)["key"] != "mail:explicit" {
		t.Fatalf("an explicit key after the window: %s", text(res))
	}
	// Nor does a derived key under a negative window.
	_, forever := e.proxy(ProxyOptions{RepeatWindow: -1})
	if res := call(t, forever, "send_email", args); actionOf(t, res)["replayed"] != true || actionOf(t, res)["key"] != k1 {
		t.Fatalf("a negative window: %s %v", text(res), actionOf(t, res))
	}

	// An uncertain key has not ended: the window does not make it new.
	if res := call(t, cs, "crash", map[string]any{"to": "y@example.com"}); !strings.Contains(text(res), "UNKNOWN") {
		t.Fatalf("the crash: %s", text(res))
	}
	later(48 * time.Hour)
	if res := call(t, cs, "crash", map[string]any{"to": "y@example.com"}); !strings.Contains(text(res), "UNCERTAIN") || strings.Contains(actionOf(t, res)["key"].(string), "-r") {
		t.Fatalf("an uncertain call after the window: %s %v", text(res), actionOf(t, res))
	}
	if n, m := e.executions("send_email"), e.executions("crash"); n != 4 || m != 1 {
		t.Fatalf("send_email ran %d times, crash %d; want 4 (3 derived, 1 explicit) and 1", n, m)
	}
}

// TestProxyArchivedKeys: a settled key whose facts were archived answers
// its retry SETTLED, naming the archive (its result went with it); a
// derived one counts as older than the repeat window, so an identical
// call is a new action after it.
func TestProxyArchivedKeys(t *testing.T) {
	var skew atomic.Int64
	e := openEnv(t, func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{})
	args := map[string]any{"to": "old@example.com"}
	k1, _ := actionOf(t, call(t, cs, "send_email", args))["key"].(string)
	call(t, cs, "send_email", map[string]any{"to": "old@example.com", KeyArgument: "mail:archived"})
	skew.Add(int64(2 * time.Hour))
	archive := filepath.Join(t.TempDir(), "archive.db")
	if res, err := e.store.Archive(ctx, ledger.ArchiveOptions{SettledBefore: e.store.Now().Add(-time.Hour), To: archive, Operator: "alice"}); err != nil || res.Keys != 2 {
		t.Fatalf("archive: %+v %v", res, err)
	}
	res := call(t, cs, "send_email", map[string]any{"to": "old@example.com", KeyArgument: "mail:archived"})
	if !res.IsError || !strings.Contains(text(res), "SETTLED") || !strings.Contains(text(res), "archived to") {
		t.Fatalf("an archived key's retry: %s", text(res))
	}
	if res := call(t, cs, "send_email", args); res.IsError || actionOf(t, res)["key"] != k1+"-r2" || actionOf(t, res)["predecessor"] != k1 {
		t.Fatalf("an archived derived key: %s %v", text(res), actionOf(t, res))
	}
	if n := e.executions("send_email"); n != 3 {
		t.Fatalf("send_email ran %d times, want 3", n)
	}
}

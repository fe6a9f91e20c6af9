package mcpgate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/hostguard"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

var ctx = context.Background()

// TestMain doubles as the upstream MCP server of the proxy tests: run
// with TOLLGATE_TEST_UPSTREAM set to a counting file, the test binary
// serves tools that append one line per execution to it.
func TestMain(m *testing.M) {
	if count := os.Getenv("TOLLGATE_TEST_UPSTREAM"); count != "" {
		runUpstream(count)
		return
	}
	os.Exit(hostguard.Main(func(p hostguard.Places) {
		ledger.SystemWitnessPath, opkeys.SystemAnchorPath = p.Witness, p.Anchor
	}, m.Run))
}

type emailArgs struct {
	To      string `json:"to,omitempty"`
	Subject string `json:"subject,omitempty"`
	Amount  any    `json:"amount,omitempty"`
}

type issueOut struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
}

// invoiceArgs are send_invoice's arguments (issue 40's upstream tool).
type invoiceArgs struct {
	Customer string `json:"customer"`
	Cents    int64  `json:"cents"`
}

type chargeArgs struct {
	Amount int    `json:"amount"`
	Idem   string `json:"idem"`
}

// runUpstream serves send_email (executes), reject_email (a tool error),
// crash (exits mid-call), hang (never answers), lookup (read-only),
// charge (takes its own idempotency key, idem, and echoes the key it
// got), strict_email (refuses an address without '@' as invalid
// params), create_issue (structured output) and export_all (a result
// over ledger.MaxResultLen), each counting its executions in the file
// at count, and each start as "start". While the file TOLLGATE_TEST_DOWN
// names exists, it exits as it starts.
func runUpstream(count string) {
	executed := func(tool string) {
		f, err := os.OpenFile(count, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			os.Exit(9)
		}
		f.WriteString(tool + "\n")
		f.Close()
	}
	if _, err := os.Stat(os.Getenv("TOLLGATE_TEST_DOWN")); err == nil {
		os.Exit(4)
	}
	executed("start")
	srv := mcp.NewServer(&mcp.Implementation{Name: "mailer", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "send_email", Description: "Send one email.", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool)}},
		func(_ context.Context, _ *mcp.CallToolRequest, in emailArgs) (*mcp.CallToolResult, any, error) {
			executed("send_email")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent to " + in.To}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "send_invoice", Description: "Sends an invoice."},
		func(_ context.Context, _ *mcp.CallToolRequest, in invoiceArgs) (*mcp.CallToolResult, any, error) {
			executed("send_invoice")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("invoiced %s %d", in.Customer, in.Cents)}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "reject_email", Description: "Always refused by the destination."},
		func(_ context.Context, _ *mcp.CallToolRequest, in emailArgs) (*mcp.CallToolResult, any, error) {
			executed("reject_email")
			return nil, nil, errors.New("mailbox full")
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "crash", Description: "Exits mid-call."},
		func(_ context.Context, _ *mcp.CallToolRequest, in emailArgs) (*mcp.CallToolResult, any, error) {
			executed("crash")
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "hang", Description: "Never answers."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in emailArgs) (*mcp.CallToolResult, any, error) {
			executed("hang")
			select {} // until the process is stopped
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup", Description: "Reads one mailbox.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in emailArgs) (*mcp.CallToolResult, any, error) {
			executed("lookup")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "mailbox " + in.To}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "charge", Description: "Charges once per idem."},
		func(_ context.Context, req *mcp.CallToolRequest, in chargeArgs) (*mcp.CallToolResult, any, error) {
			executed("charge")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("charged %d; meta %v; idem %s", in.Amount, req.Params.Meta[MetaKey], in.Idem)}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "strict_email", Description: "Refuses an address without @ as invalid params."},
		func(_ context.Context, _ *mcp.CallToolRequest, in emailArgs) (*mcp.CallToolResult, any, error) {
			if !strings.Contains(in.To, "@") {
				return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "to: not an address"}
			}
			executed("strict_email")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent to " + in.To}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "create_issue", Description: "Opens an issue; answers its number as structured output."},
		func(_ context.Context, _ *mcp.CallToolRequest, in emailArgs) (*mcp.CallToolResult, issueOut, error) {
			executed("create_issue")
			return nil, issueOut{Number: 12, Title: in.Subject}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "export_all", Description: "Answers more than a report stores."},
		func(_ context.Context, _ *mcp.CallToolRequest, in emailArgs) (*mcp.CallToolResult, any, error) {
			executed("export_all")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("row\n", ledger.MaxResultLen/4+1)}}}, nil, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// env is one test's ledger, upstream counting file and operator.
type env struct {
	t     *testing.T
	store *ledger.Store
	count string
	// down is the file whose presence makes the upstream exit as it
	// starts.
	down string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return openEnv(t, nil)
}

// openEnv is newEnv with the ledger's clock (nil: the real one).
func openEnv(t *testing.T, now func() time.Time) *env {
	t.Helper()
	dir := t.TempDir()
	s, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{Operator: "alice", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &env{t: t, store: s, count: filepath.Join(dir, "executed"), down: filepath.Join(dir, "down")}
}

func (e *env) policy(pattern string, mode approvals.Mode) {
	e.t.Helper()
	if _, err := e.store.SetPolicy(ctx, approvals.Rule{Pattern: pattern, Mode: mode, TTL: time.Hour}, "alice"); err != nil {
		e.t.Fatal(err)
	}
}

// executions counts the upstream's executions of tool.
func (e *env) executions(tool string) int {
	b, _ := os.ReadFile(e.count)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l == tool {
			n++
		}
	}
	return n
}

// upstream is a command running the test binary as the upstream server.
func (e *env) upstream() *mcp.CommandTransport {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TOLLGATE_TEST_UPSTREAM="+e.count, "TOLLGATE_TEST_DOWN="+e.down)
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
}

// dial starts a fresh upstream process each time the proxy asks.
func (e *env) dial() mcp.Transport { return e.upstream() }

// connect runs srv on one end of an in-memory pipe and returns a client
// session on the other.
func connect(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// proxy starts a proxy in front of a fresh upstream process.
func (e *env) proxy(opt ProxyOptions) (*Proxy, *mcp.ClientSession) {
	e.t.Helper()
	p, err := NewProxy(ctx, e.store, e.dial, opt)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { p.Close() })
	return p, connect(e.t, p.Server())
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// firstText is the text of a result's first content: the upstream's
// answer, before any line the proxy adds.
func firstText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// structured decodes a result's structured content into a map.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content is not an object: %s", b)
	}
	return m
}

// TestServeOffersNoDecision: the server's tools are exactly guard,
// report and status, with typed schemas, and guard is marked idempotent.
func TestServeOffersNoDecision(t *testing.T) {
	e := newEnv(t)
	cs := connect(t, NewServer(e.store, ServeOptions{}))
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		switch tool.Name {
		case "guard":
			if tool.Annotations == nil || !tool.Annotations.IdempotentHint {
				t.Fatalf("guard is not marked idempotent: %+v", tool.Annotations)
			}
			for _, f := range []string{`"key"`, `"kind"`, `"target"`, `"body"`, `"lease_seconds"`} {
				if !strings.Contains(string(schema), f) {
					t.Fatalf("guard's schema lacks %s: %s", f, schema)
				}
			}
			if !strings.Contains(string(schema), `"required":["key","kind","target","body"]`) {
				t.Fatalf("guard's schema does not require the payload: %s", schema)
			}
		case "report":
			if !strings.Contains(string(schema), `"enum":["succeeded","failed","unknown"]`) {
				t.Fatalf("report's outcome is not an enum: %s", schema)
			}
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"guard", "report", "status"}) {
		t.Fatalf("tools %v, want exactly guard, report and status", names)
	}
}

// TestServeGuardLifecycle: pending answers at once with the deadline and
// the instruction to retry; after an operator's approval the same call
// is permitted, reported, then settled; a different payload conflicts;
// bad input is refused with the rule and stores nothing.
func TestServeGuardLifecycle(t *testing.T) {
	e := newEnv(t)
	e.policy("refund", approvals.Approval)
	cs := connect(t, NewServer(e.store, ServeOptions{}))
	args := map[string]any{"key": "refund:entry-42", "kind": "refund", "target": "acct-7", "body": "40 EUR"}

	start := time.Now()
	res := call(t, cs, "guard", args)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a pending guard waited %v: pending is an answer", d)
	}
	a := structured(t, res)
	if res.IsError || a["verdict"] != "retry-later" || a["state"] != "pending" || a["approval_expires_at"] == nil {
		t.Fatalf("first guard: %v %s", a, text(res))
	}
	if !strings.Contains(text(res), "PENDING APPROVAL") || !strings.Contains(text(res), "call guard again with the same key and payload") {
		t.Fatalf("pending gives no instruction: %s", text(res))
	}
	d, err := e.store.Status(ctx, "refund:entry-42")
	if err != nil || d.Agent != "mcp:test-agent" {
		t.Fatalf("the agent is not the MCP client's name: %q %v", d.Agent, err)
	}
	if res := call(t, cs, "guard", args); structured(t, res)["replayed"] != true {
		t.Fatalf("a retry made a second request: %s", text(res))
	}
	if _, err := e.store.Approve(ctx, "refund:entry-42", "alice", "checked"); err != nil {
		t.Fatal(err)
	}
	res = call(t, cs, "guard", args)
	a = structured(t, res)
	permit, _ := a["permit_id"].(string)
	if a["verdict"] != "permitted" || permit == "" || !strings.Contains(text(res), "PERMITTED") {
		t.Fatalf("approved guard: %v", a)
	}
	res = call(t, cs, "report", map[string]any{"key": "refund:entry-42", "permit_id": permit, "outcome": "succeeded", "ref": "pay-9", "latency_ms": 120})
	if res.IsError || structured(t, res)["state"] != "succeeded" {
		t.Fatalf("report: %s", text(res))
	}
	res = call(t, cs, "guard", args)
	if a := structured(t, res); a["verdict"] != "settled" || !strings.Contains(text(res), "do not execute it again") {
		t.Fatalf("after the report: %v %s", a, text(res))
	}
	res = call(t, cs, "status", map[string]any{"key": "refund:entry-42"})
	if s := structured(t, res); s["state"] != "succeeded" || len(s["votes"].([]any)) != 1 {
		t.Fatalf("status: %v", s)
	}

	args["body"] = "400 EUR"
	res = call(t, cs, "guard", args)
	if c := structured(t, res); c["verdict"] != "conflict" || !strings.Contains(text(res), "CONFLICT") || strings.Contains(text(res), "400 EUR") {
		t.Fatalf("a different payload: %v %s", c, text(res))
	}

	for name, bad := range map[string]map[string]any{
		"bad key":      {"key": "Refund 42", "kind": "refund", "target": "t", "body": "b"},
		"body too big": {"key": "refund:big", "kind": "refund", "target": "t", "body": strings.Repeat("x", ledger.MaxFieldRunes+1)},
		"lease":        {"key": "refund:lease", "kind": "refund", "target": "t", "body": "b", "lease_seconds": 999999999},
	} {
		res := call(t, cs, "guard", bad)
		if !res.IsError || !strings.Contains(text(res), "REFUSED") {
			t.Fatalf("%s: not refused: %s", name, text(res))
		}
		if _, err := e.store.Status(ctx, bad["key"].(string)); !errors.Is(err, ledger.ErrNotFound) && !errors.Is(err, ledger.ErrInvalidInput) && err == nil {
			t.Fatalf("%s: stored something", name)
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "report", Arguments: map[string]any{"key": "refund:entry-42", "permit_id": permit, "outcome": "maybe"}}); err == nil {
		if res := call(t, cs, "report", map[string]any{"key": "refund:entry-42", "permit_id": permit, "outcome": "maybe"}); !res.IsError {
			t.Fatal("an outcome outside the enum was accepted")
		}
	}
}

// TestProxyListsToolsUnchanged: the proxy offers the upstream's tools as
// they are, plus the optional idempotency_key argument on every tool it
// guards (not on read-only tools, which pass).
func TestProxyListsToolsUnchanged(t *testing.T) {
	e := newEnv(t)
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "direct"}, nil).Connect(ctx, e.upstream(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	want := map[string]*mcp.Tool{}
	for tool, err := range direct.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		want[tool.Name] = tool
	}
	_, cs := e.proxy(ProxyOptions{})
	n := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		w := want[tool.Name]
		if w == nil || w.Description != tool.Description {
			t.Fatalf("tool %q is not the upstream's", tool.Name)
		}
		wa, _ := json.Marshal(w.Annotations)
		ga, _ := json.Marshal(tool.Annotations)
		if string(wa) != string(ga) {
			t.Fatalf("%s: annotations %s, upstream's %s", tool.Name, ga, wa)
		}
		got := tool.InputSchema.(map[string]any)
		props := got["properties"].(map[string]any)
		_, ok := props[KeyArgument]
		if read := tool.Annotations != nil && tool.Annotations.ReadOnlyHint; ok == read {
			t.Fatalf("%s (read-only %v) has the %s argument: %v", tool.Name, read, KeyArgument, ok)
		}
		delete(props, KeyArgument)
		// The context is the proxy's to derive: without --caller-context
		// no tool offers the model a tollgate_context argument.
		if _, ok := props[ContextArgument]; ok {
			t.Fatalf("%s offers %s without --caller-context", tool.Name, ContextArgument)
		}
		gs, _ := json.Marshal(got)
		ws, _ := json.Marshal(w.InputSchema)
		if string(gs) != string(ws) {
			t.Fatalf("%s: schema %s, upstream's %s", tool.Name, gs, ws)
		}
	}
	if n != len(want) || n != 10 {
		t.Fatalf("proxy lists %d tools, upstream %d", n, len(want))
	}
}

// TestProxyWaitsForApprovalThenExecutesOnce: under an approval policy the
// call is not forwarded until an operator approves; then it runs exactly
// once however often the agent repeats it.
func TestProxyWaitsForApprovalThenExecutesOnce(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.send_email", approvals.Approval)
	_, cs := e.proxy(ProxyOptions{})
	args := map[string]any{"to": "ops@example.com", "subject": "refund issued", "amount": 40.10, KeyArgument: "email:refund-42"}
	for i := 0; i < 3; i++ {
		res := call(t, cs, "send_email", args)
		if !res.IsError || !strings.Contains(text(res), "PENDING APPROVAL") || !strings.Contains(text(res), "repeat this exact tool call") {
			t.Fatalf("call %d before approval: %s", i, text(res))
		}
	}
	if n := e.executions("send_email"); n != 0 {
		t.Fatalf("executed %d times before approval", n)
	}
	d, err := e.store.Status(ctx, "email:refund-42")
	if err != nil || d.Kind != "mcp.send_email" || d.Payload == nil || d.Payload.Target != "mailer" {
		t.Fatalf("the request: %+v %v", d, err)
	}
	if _, err := e.store.Approve(ctx, "email:refund-42", "alice", ""); err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "send_email", args)
	if res.IsError || text(res) != "sent to ops@example.com" {
		t.Fatalf("after approval: %s", text(res))
	}
	for i := 0; i < 3; i++ {
		res := call(t, cs, "send_email", args)
		if res.IsError || firstText(res) != "sent to ops@example.com" || !strings.Contains(text(res), "REPLAYED") {
			t.Fatalf("repeat %d: %s", i, text(res))
		}
	}
	if n := e.executions("send_email"); n != 1 {
		t.Fatalf("executed %d times, want exactly once", n)
	}
	if d, _ := e.store.Status(ctx, "email:refund-42"); d.State != ledger.StateSucceeded {
		t.Fatalf("state %s after a successful call", d.State)
	}
	// The same arguments with another amount are a conflict, not a send.
	args["amount"] = 400
	if res := call(t, cs, "send_email", args); !res.IsError || !strings.Contains(text(res), "CONFLICT") {
		t.Fatalf("changed arguments under the same key: %s", text(res))
	}
	if n := e.executions("send_email"); n != 1 {
		t.Fatalf("a conflict executed: %d", n)
	}
}

// TestProxyAutoPolicyExecutesOnce: an auto call runs once under the key
// derived from its arguments; a tool error is reported failed and is not
// run again either.
func TestProxyAutoPolicyExecutesOnce(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{})
	args := map[string]any{"subject": "weekly", "to": "team@example.com"}
	if res := call(t, cs, "send_email", args); res.IsError {
		t.Fatalf("auto call: %s", text(res))
	}
	// The same arguments in another order are the same call.
	if res := call(t, cs, "send_email", map[string]any{"to": "team@example.com", "subject": "weekly"}); !strings.Contains(text(res), "REPLAYED") {
		t.Fatalf("the repeat: %s", text(res))
	}
	if res := call(t, cs, "send_email", map[string]any{"to": "team@example.com", "subject": "monthly"}); res.IsError {
		t.Fatalf("other arguments are another action: %s", text(res))
	}
	if n := e.executions("send_email"); n != 2 {
		t.Fatalf("send_email executed %d times, want 2 (two distinct calls)", n)
	}
	res := call(t, cs, "reject_email", args)
	if !res.IsError || !strings.Contains(text(res), "mailbox full") {
		t.Fatalf("a tool error is passed through: %s", text(res))
	}
	if res := call(t, cs, "reject_email", args); !res.IsError || !strings.Contains(text(res), "mailbox full") || !strings.Contains(text(res), "REPLAYED") {
		t.Fatalf("a failed call repeated: %s", text(res))
	}
	if n := e.executions("reject_email"); n != 1 {
		t.Fatalf("reject_email executed %d times", n)
	}
	items, err := e.store.List(ctx, ledger.Filter{Kind: "mcp.reject_email"})
	if err != nil || len(items) != 1 || items[0].State != ledger.StateFailed {
		t.Fatalf("a tool error is not reported failed: %+v %v", items, err)
	}
}

// TestProxyCrashLeavesUncertain: the upstream exits mid-call; the call is
// reported unknown, the key is uncertain, and neither a restarted proxy
// nor the proxy that restarted its upstream runs it again.
func TestProxyCrashLeavesUncertain(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{})
	args := map[string]any{"to": "x@example.com", KeyArgument: "crash:1"}
	res := call(t, cs, "crash", args)
	if !res.IsError || !strings.Contains(text(res), "UNKNOWN") {
		t.Fatalf("a crash mid-call: %s", text(res))
	}
	if d, _ := e.store.Status(ctx, "crash:1"); d.State != ledger.StateUncertain || len(d.Reports) != 1 || d.Reports[0].Outcome != ledger.Unknown {
		t.Fatalf("after the crash: %s %+v", d.State, d.Reports)
	}
	_, cs2 := e.proxy(ProxyOptions{}) // the operator restarts the proxy
	for i := 0; i < 2; i++ {
		if res := call(t, cs2, "crash", args); !strings.Contains(text(res), "UNCERTAIN") {
			t.Fatalf("the repeat after a restart: %s", text(res))
		}
	}
	if n := e.executions("crash"); n != 1 {
		t.Fatalf("crash executed %d times, want once", n)
	}
	// The first proxy restarted its upstream: a new call runs there, and
	// the crashed one still does not.
	if res := call(t, cs, "send_email", map[string]any{"to": "y@example.com"}); res.IsError {
		t.Fatalf("a call after the upstream's restart: %s", text(res))
	}
	if res := call(t, cs, "crash", args); !strings.Contains(text(res), "UNCERTAIN") {
		t.Fatalf("the crashed call after the restart: %s", text(res))
	}
	if n := e.executions("crash"); n != 1 {
		t.Fatalf("crash executed %d times, want once", n)
	}
}

// TestProxyTimeoutIsUnknown: an upstream that never answers is bounded by
// the timeout and reported unknown.
func TestProxyTimeoutIsUnknown(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{Timeout: 500 * time.Millisecond})
	start := time.Now()
	res := call(t, cs, "hang", map[string]any{KeyArgument: "hang:1"})
	if !res.IsError || !strings.Contains(text(res), "UNKNOWN") || time.Since(start) > 20*time.Second {
		t.Fatalf("a call that never answers: %s after %v", text(res), time.Since(start))
	}
	if d, _ := e.store.Status(ctx, "hang:1"); d.State != ledger.StateUncertain {
		t.Fatalf("state %s after a timeout", d.State)
	}
}

// TestProxyRefusesBadInputBeforeGuard: arguments beyond the payload
// bounds, a malformed idempotency_key, and arguments that are not an
// object are refused with the rule and record nothing.
func TestProxyRefusesBadInputBeforeGuard(t *testing.T) {
	e := newEnv(t)
	e.policy("mcp.*", approvals.Auto)
	_, cs := e.proxy(ProxyOptions{})
	for name, args := range map[string]map[string]any{
		"too big":     {"to": strings.Repeat("a", ledger.MaxFieldRunes)},
		"bad key":     {"to": "a", KeyArgument: "Not A Key"},
		"key not str": {"to": "a", KeyArgument: 42},
	} {
		res := call(t, cs, "send_email", args)
		if !res.IsError || !strings.Contains(text(res), "REFUSED before guard") {
			t.Fatalf("%s: %s", name, text(res))
		}
	}
	if items, _ := e.store.List(ctx, ledger.Filter{}); len(items) != 0 || e.executions("send_email") != 0 {
		t.Fatalf("refused calls left %d actions and %d executions", len(items), e.executions("send_email"))
	}
	if _, _, err := splitArguments(json.RawMessage(`[1,2]`)); err == nil {
		t.Fatal("an array was taken as arguments")
	}
}

// TestDerivedKeys: the derived key is a valid key, stable for the same
// arguments in any order, different across tools and arguments, and
// epoch-qualified under an active epoch; the later keys of its chain stay
// valid keys however long the tool's name.
func TestDerivedKeys(t *testing.T) {
	e := newEnv(t)
	p := &Proxy{store: e.store, opt: ProxyOptions{RepeatWindow: DefaultRepeatWindow}}
	derived := func(tool, body string) string {
		t.Helper()
		k, pred, err := p.repeatKey(ctx, tool, body)
		if err != nil || pred != "" {
			t.Fatalf("%s: %s %q %v", tool, k, pred, err)
		}
		return k
	}
	a1, _ := canonicalJSON(map[string]any{"b": 1, "a": "<x>"})
	if a1 != `{"a":"<x>","b":1}` {
		t.Fatalf("canonical JSON %s", a1)
	}
	k1 := derived("Send_Email.v2", a1)
	k2 := derived("send-email-v2", a1)
	k3 := derived("Send_Email.v2", `{"a":"<y>","b":1}`)
	if _, err := ledger.ParseKey(k1); err != nil || !strings.HasPrefix(k1, "mcp:send-email-v2:") {
		t.Fatalf("derived key %q: %v", k1, err)
	}
	if k1 == k2 || k1 == k3 {
		t.Fatalf("keys collide: %s %s %s", k1, k2, k3)
	}
	long := derived(strings.Repeat("tool", 40), a1)
	if _, err := ledger.ParseKey(long); err != nil {
		t.Fatalf("a long tool name: %q %v", long, err)
	}
	for _, n := range []int{2, 10, 1234567} {
		for _, tool := range []string{"Send_Email.v2", strings.Repeat("tool", 40)} {
			k := chainKey("", tool, a1, n)
			if _, err := ledger.ParseKey(k); err != nil || !strings.HasSuffix(k, fmt.Sprintf("-r%d", n)) || !strings.HasPrefix(k, "mcp:") {
				t.Fatalf("key %d of %s's chain: %q %v", n, tool, k, err)
			}
		}
	}
	if chainKey("", "Send_Email.v2", a1, 2) != k1+"-r2" {
		t.Fatalf("the second key of %s's chain: %s", k1, chainKey("", "Send_Email.v2", a1, 2))
	}
	info, err := e.store.ActivateEpoch(ctx, "", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if k4 := derived("Send_Email.v2", a1); k4 != "hsr1:"+info.Epoch+":"+k1 {
		t.Fatalf("under epoch %s: %s", info.Epoch, k4)
	}
}

// TestStdioSkipsMalformedLines: lines that are not JSON-RPC messages,
// over-long lines included, are answered with a parse error each and
// dropped; the messages around them pass through whole.
func TestStdioSkipsMalformedLines(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	long := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", MaxLine) + `"}}`
	in := strings.NewReader("not json\n" + long + "\n\n[]\n" + good + "\n" + `[` + good + `]` + "\n")
	var out strings.Builder
	f := &lineFilter{r: bufio.NewReader(in), w: &lockedWriter{w: &out}}
	passed, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(passed) != good+"\n["+good+"]\n" {
		t.Fatalf("passed %q", passed)
	}
	if n := strings.Count(out.String(), `"code":-32700`); n != 3 {
		t.Fatalf("%d parse errors, want 3 (not JSON, too long, empty batch):\n%s", n, out.String())
	}
}
